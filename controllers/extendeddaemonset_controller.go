package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/extendeddaemonset/extendeddaemonset/analysis"
	"github.com/extendeddaemonset/extendeddaemonset/analysis/web"
	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/notify"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/outcome"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/store"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/overrides"
)

// ExtendedDaemonSetReconciler keeps one replica set per pod template,
// decides which one is active, prunes old ones, and sums their status up.
type ExtendedDaemonSetReconciler struct {
	client.Client
	// APIReader reads around the cache: before creating a replica set, to
	// be sure a just-created one is not merely missing from the cache.
	APIReader client.Reader
	Recorder  events.EventRecorder
	// MaxConcurrentReconciles bounds parallel reconciles; zero means one.
	MaxConcurrentReconciles int

	// queriers are the Prometheus clients of the analyses, one per
	// provider and credentials; the zero value is ready.
	queriers analysis.Queriers
	// WebClient sends the requests of web metrics under the host policy;
	// nil measures every web metric as an error.
	WebClient *web.Client
	// statusWrites paces the writes of counters.
	statusWrites outcome.StatusWrites
	// store reads the cached pods and nodes in place.
	store *store.Store
	// Clock is the time source; nil means the real clock.
	Clock clock.PassiveClock
	// Webhooks asks the canaries' gates and tells their notifications;
	// nil sends none (and gates then hold until their timeout).
	Webhooks *notify.Notifier
}

// SetupWithManager registers the reconciler; a change of any replica set
// status reaches its ExtendedDaemonSet.
func (r *ExtendedDaemonSetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr)
	if r.Webhooks != nil {
		// A gate's answer arrives between passes: its ExtendedDaemonSet
		// decides on it at once.
		b = b.WatchesRawSource(source.Channel(r.Webhooks.Requeues(), &handler.EnqueueRequestForObject{}))
	}
	return b.
		Named("extendeddaemonset").
		For(&v1alpha1.ExtendedDaemonSet{}).
		Owns(&v1alpha1.ExtendedDaemonSetReplicaSet{}).
		// Canary verdicts read container restarts and waiting reasons.
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.extendedDaemonSetOfCanaryPod),
			builder.WithPredicates(store.ContainerStateChanged())).
		// Malformed resource override annotations are reported in status.
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(extendedDaemonSetsOfNodeAnnotations),
			builder.WithPredicates(store.ResourceOverridesChanged())).
		// A canary node that goes NotReady fails, pauses or moves its
		// canary now, not when the canary's duration ends; one that enters
		// maintenance moves it.
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.extendedDaemonSetsOfCanaryNode),
			builder.WithPredicates(store.NodeReadinessOrMaintenanceChanged())).
		// A DaemonSet a workloadRef names: its template's revisions, and its
		// status, which moves with its pods.
		Watches(&appsv1.DaemonSet{}, handler.EnqueueRequestsFromMapFunc(r.extendedDaemonSetsOfDaemonSet)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(1, r.MaxConcurrentReconciles)}).
		Complete(r)
}

// extendedDaemonSetOfCanaryPod maps a pod of a running canary to its
// ExtendedDaemonSet. Other pods are the replica sets' business: during a
// rollout of thousands of nodes, their events would each cost a pass here.
func (r *ExtendedDaemonSetReconciler) extendedDaemonSetOfCanaryPod(ctx context.Context, pod client.Object) []reconcile.Request {
	key := types.NamespacedName{Namespace: pod.GetNamespace(), Name: pod.GetLabels()[v1alpha1.ExtendedDaemonSetNameLabel]}
	if key.Name == "" {
		return nil
	}
	// The cache's own object, not a copy (this runs on every pod event):
	// read, never written.
	eds := &v1alpha1.ExtendedDaemonSet{}
	if err := r.Get(ctx, key, eds, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	if c := canary.Running(eds); c == nil || c.ReplicaSet != pod.GetLabels()[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel] {
		return nil
	}
	return []reconcile.Request{{NamespacedName: key}}
}

// extendedDaemonSetsOfCanaryNode maps a node to the ExtendedDaemonSets
// whose running canary runs on it. Readiness changes are rare, and
// ExtendedDaemonSets few: the cached list is read as is.
func (r *ExtendedDaemonSetReconciler) extendedDaemonSetsOfCanaryNode(ctx context.Context, node client.Object) []reconcile.Request {
	var list v1alpha1.ExtendedDaemonSetList
	if err := r.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if c := canary.Running(&list.Items[i]); c != nil && slices.Contains(c.Nodes, node.GetName()) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

func extendedDaemonSetsOfNodeAnnotations(_ context.Context, node client.Object) []reconcile.Request {
	n, ok := node.(*corev1.Node)
	if !ok {
		return nil
	}
	var out []reconcile.Request
	for _, ref := range overrides.AnnotatedExtendedDaemonSets(n) {
		out = append(out, reconcile.Request{NamespacedName: ref})
	}
	return out
}

// canaryMayRun says whether a canary may be running or about to start. A
// canary decides on time and on what it recorded last: a cache that has
// not yet seen the last status write would measure again, tell the same
// transition twice, or act on an outdated analysis. Those reconciles read
// the object around the cache; the others, by far the most, do not.
func canaryMayRun(eds *v1alpha1.ExtendedDaemonSet) bool {
	return eds.Spec.Strategy.Canary != nil && (eds.Status.Canary != nil || eds.Status.ObservedGeneration != eds.Generation)
}

// Reconcile is: replica set of the current template, roles, history, then
// status, written on every path, and the transitions it tells.
func (r *ExtendedDaemonSetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	eds := &v1alpha1.ExtendedDaemonSet{}
	if err := r.Get(ctx, req.NamespacedName, eds); err != nil {
		if apierrors.IsNotFound(err) {
			r.statusWrites.Forget(req.NamespacedName)
			analysisMetrics().Forget(req.Namespace, req.Name)
			extendedDaemonSetMetrics().forget(req.Namespace, req.Name)
			if r.Webhooks != nil {
				r.Webhooks.Forget(req.NamespacedName)
			}
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !eds.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	// One instant per pass: the canary's start and schedule, the bake and
	// the status are all decided at it, however long the reads and
	// Prometheus queries between them take.
	now := store.Now(r.Clock)
	if canaryMayRun(eds) || bakeJudging(eds) {
		if err := r.APIReader.Get(ctx, req.NamespacedName, eds); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	before := eds.DeepCopy()

	obs, requeue, err := r.reconcile(ctx, eds, now)
	setExtendedDaemonSetStatus(eds, obs, err)
	wait, _, perr := r.statusWrites.Patch(ctx, r.Client, before, eds, equality.Semantic.DeepEqual(before.Status, eds.Status),
		outcome.ExtendedDaemonSetCountersOnly(&before.Status, &eds.Status), now)
	switch {
	case wait > 0:
		// Counters alone moved, and were written a moment ago, or the
		// cache has not seen the last write yet: the change goes out with
		// the next pass, once the interval has passed or the write's
		// event is in.
		return ctrl.Result{RequeueAfter: outcome.Soonest(requeue, wait)}, err
	case apierrors.IsConflict(perr):
		// This pass read a version the API server has since replaced (a
		// cache behind it, or another writer): nothing it decided is
		// written or told, or a transition would be told twice. The newer
		// version gets a pass of its own.
		return ctrl.Result{RequeueAfter: outcome.StaleReadRetry}, nil
	case perr != nil:
		return ctrl.Result{}, errors.Join(err, fmt.Errorf("patching status: %w", perr))
	}
	// Told once the status that records them is written: a failed patch
	// is retried and would tell them twice.
	r.tellTransitions(before, eds, byName(obs.sets, eds.Status.ActiveReplicaSet), obs.canaryNote, now)
	r.sendWebhooks(before, eds, obs)
	if len(obs.bakeMeasured) > 0 {
		analysisMetrics().ObserveMeasurements(eds.Namespace, eds.Name, obs.bakeMeasured)
	}
	extendedDaemonSetMetrics().observe(before, eds, byName(obs.sets, eds.Status.ActiveReplicaSet), now)
	switch {
	case outcome.IsStalling(err):
		// Retrying cannot help, but a canary's clock still runs: its
		// timeout and its measurements come due.
		ctrl.LoggerFrom(ctx).Info("spec cannot be used until it changes", "reason", err.Error())
		return ctrl.Result{RequeueAfter: requeue}, nil
	case err != nil:
		return ctrl.Result{}, err
	case obs.pruneErr != nil:
		return ctrl.Result{}, obs.pruneErr
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// reconcile observes and acts at now: the replica set of the current
// template, the active one and the canary, and history. It returns what the
// status is computed from, and when time alone changes the decision.
func (r *ExtendedDaemonSetReconciler) reconcile(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet, now time.Time) (edsObservation, time.Duration, error) {
	obs := edsObservation{now: now}
	sets, err := r.replicaSets(ctx, eds, r.Client)
	if err != nil {
		return obs, 0, err
	}
	current, err := r.currentReplicaSet(ctx, eds, sets)
	if err != nil {
		return obs, 0, err
	}
	if byName(sets, current.Name) == nil {
		sets = append(sets, current)
	}
	obs.sets, obs.current = sets, current
	annotated, err := store.ListNodesAnnotatingOverrides(ctx, r.Client, client.ObjectKeyFromObject(eds))
	if err != nil {
		return obs, 0, err
	}
	obs.malformedOverrides = overrides.CheckNodeAnnotations(eds.Namespace, eds.Name, annotated)
	sets, note, requeue, err := r.chooseActive(ctx, eds, sets, current, now)
	obs.sets, obs.canaryNote = sets, note
	if err != nil {
		return obs, requeue, err
	}
	measured, untilBake := r.stepBake(ctx, eds, sets, now)
	obs.bakeMeasured, requeue = measured, outcome.Soonest(requeue, untilBake)
	obs.domainGate = r.stepDomainGates(eds, sets, now)
	requeue = outcome.Soonest(requeue, obs.domainGate.RequeueAfter)
	if eds.Spec.WorkloadRef != nil && (eds.Status.Canary != nil || bakeJudging(eds)) {
		// The canary's verdict and a bake's measure the DaemonSet's pods,
		// which no watch of ours sees restart.
		requeue = outcome.Soonest(requeue, store.WorkloadPoll)
	}
	// History that could not be pruned is retried, but says nothing of
	// the rollout: it must not turn a rolled-out ExtendedDaemonSet not
	// Ready for a pass, which would tell RolledOut again after.
	obs.pruneErr = r.pruneHistory(ctx, eds, sets, current)
	return obs, requeue, nil
}
