package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/fluxevents"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/outcome"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/store"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// defaultMaxConcurrentWrites bounds the pod creations and deletions one
// reconcile has in flight.
const defaultMaxConcurrentWrites = 32

// ReplicaSetReconciler runs the pods of one ExtendedDaemonSetReplicaSet:
// observe nodes and pods, plan with the rollout package, create and delete,
// then write status once.
type ReplicaSetReconciler struct {
	client.Client
	// APIReader reads what the cache does not hold: the pods of a DaemonSet
	// being migrated.
	APIReader client.Reader
	Recorder  events.EventRecorder
	// Clock is the time source; nil means the real clock.
	Clock clock.PassiveClock
	// MaxConcurrentReconciles and MaxConcurrentWrites bound parallelism; zero
	// means the defaults.
	MaxConcurrentReconciles int
	MaxConcurrentWrites     int
	// UnresponsiveNodeGrace is how long a node may be not Ready before its
	// agent stops counting against the budget; zero means the default.
	UnresponsiveNodeGrace time.Duration
	// ViewCheckInterval is how often a replica set's nodes, kept from pass
	// to pass, are stated afresh and checked; zero means
	// DefaultViewCheckInterval.
	ViewCheckInterval time.Duration

	expectations *store.Expectations
	backoff      *failureBackoff
	refusals     *onceEvery
	statusWrites outcome.StatusWrites
	// store reads the cached pods and nodes in place.
	store *store.Store
	// journal tells a pass which nodes changed since the last one: the
	// watch handlers record them. views are what each replica set's
	// passes keep of the nodes between them.
	journal *store.Journal
	views   replicaSetViews
	// locks serializes the reconciles of one ExtendedDaemonSet's replica
	// sets: they spend one budget, and each must see the other's writes.
	locks sync.Map
}

// SetupWithManager registers the reconciler and its watches: its own
// objects, their ExtendedDaemonSet (role and strategy), the pods of the
// ExtendedDaemonSet (any replica set may replace them), and nodes.
func (r *ReplicaSetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.expectations = store.NewExpectations()
	r.backoff = newFailureBackoff()
	r.refusals = newOnceEvery(refusalInterval)
	r.journal = store.NewJournal()
	// Registered at zero, so that a dashboard or an alert sees it before
	// any mismatch.
	replicaSetViewMismatches()
	return ctrl.NewControllerManagedBy(mgr).
		Named("extendeddaemonsetreplicaset").
		For(&v1alpha1.ExtendedDaemonSetReplicaSet{}).
		Watches(&v1alpha1.ExtendedDaemonSet{}, handler.EnqueueRequestsFromMapFunc(r.replicaSetsOfObject),
			builder.WithPredicates(replicaSetInputsChanged())).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.replicaSetsOfPod),
			builder.WithPredicates(podStateChanged())).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.replicaSetsOfNode),
			builder.WithPredicates(store.NodePlacementChanged())).
		// The pods of a DaemonSet a workloadRef names are not watched; its
		// status moves with them.
		Watches(&appsv1.DaemonSet{}, handler.EnqueueRequestsFromMapFunc(r.replicaSetsOfDaemonSet)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(1, r.MaxConcurrentReconciles)}).
		Complete(r)
}

// Reconcile is observe, plan, act, status.
func (r *ReplicaSetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	ers := &v1alpha1.ExtendedDaemonSetReplicaSet{}
	if err := r.Get(ctx, req.NamespacedName, ers); err != nil {
		if apierrors.IsNotFound(err) {
			r.statusWrites.Forget(req.NamespacedName)
			r.views.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ers.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	// The ExtendedDaemonSet is read under the lock: read before, it could
	// name as active a replica set that the reconcile holding the lock
	// has just seen replaced, and this one would then undo its work.
	owner := types.NamespacedName{Namespace: ers.Namespace, Name: ers.Labels[v1alpha1.ExtendedDaemonSetNameLabel]}
	defer r.lockExtendedDaemonSet(owner)()
	eds, err := r.owner(ctx, ers)
	if err != nil {
		return ctrl.Result{}, err
	}
	if eds == nil {
		// Without its ExtendedDaemonSet the replica set is garbage, and
		// nothing it wrote needs remembering.
		r.expectations.Forget(owner)
		r.views.forget(req.NamespacedName)
		if r.journal != nil {
			r.journal.Forget(owner.String())
		}
		return ctrl.Result{}, nil
	}
	log = log.WithValues("extendedDaemonSet", klog.KObj(eds))
	ctx = ctrl.LoggerInto(ctx, log)
	before := ers.DeepCopy()

	now := r.now()
	decideStart := time.Now()
	obs, err := r.observe(ctx, eds, ers, now)
	if err != nil {
		// What the pods are is unknown: the counters stay as they were,
		// the conditions say why.
		outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonReconcileFailed, Message: err.Error()}.Apply(ers)
		_, perr := r.writeStatus(ctx, before, ers, now)
		return ctrl.Result{}, errors.Join(err, perr)
	}
	plan := obs.view.state.Plan(obs.input)
	replicaSetDecisionSeconds().Observe(time.Since(decideStart).Seconds())
	if len(plan.Create)+len(plan.Delete)+len(plan.UpdateInPlace) > 0 {
		log.V(1).Info("carrying out plan", "role", obs.role, "create", len(plan.Create), "delete", len(plan.Delete),
			"updateInPlace", len(plan.UpdateInPlace))
	}
	_, actErr := r.act(ctx, eds, ers, obs, plan)
	r.journalWrites(eds, obs, plan)

	untilStalled := setReplicaSetStatus(ers, obs, plan, actErr, now)
	untilWritten, err := r.writeStatus(ctx, before, ers, now)
	switch {
	case apierrors.IsConflict(err):
		// The status was computed from a version the API server has
		// since replaced; the pods written are in the expectations, and
		// the next pass counts them from the newer version.
		return ctrl.Result{RequeueAfter: outcome.StaleReadRetry}, actErr
	case err != nil:
		return ctrl.Result{}, errors.Join(actErr, fmt.Errorf("patching status: %w", err))
	case actErr != nil:
		return ctrl.Result{}, actErr
	}
	requeue := outcome.Soonest(outcome.Soonest(plan.RequeueAfter, untilStalled), untilWritten)
	if next := r.expectations.Next(owner); !next.IsZero() {
		// A pod expected but never seen sends no event at its deadline.
		requeue = outcome.Soonest(requeue, max(next.Sub(now), time.Millisecond))
	}
	if obs.migrating > 0 {
		requeue = outcome.Soonest(requeue, migrationPoll)
	}
	if obs.workload && obs.role != v1alpha1.ReplicaSetUnknown {
		requeue = outcome.Soonest(requeue, store.WorkloadPoll)
	}
	requeue = outcome.Soonest(requeue, obs.view.untilUnresponsive(now))
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// writeStatus writes the status of ers in one patch when a reader needs the
// change now, and tells what it newly says once written; a change of
// counters alone waits for the counter write interval, any change waits
// for the cache to see the last write, and the returned delay is when to
// try again.
func (r *ReplicaSetReconciler) writeStatus(ctx context.Context, before, ers *v1alpha1.ExtendedDaemonSetReplicaSet, now time.Time) (time.Duration, error) {
	wait, wrote, err := r.statusWrites.Patch(ctx, r.Client, before, ers, equality.Semantic.DeepEqual(before.Status, ers.Status),
		outcome.ReplicaSetCountersOnly(&before.Status, &ers.Status), now)
	if wrote {
		r.recordPlacementEvents(ers, &before.Status)
	}
	return wait, err
}

// journalWrites records in the journal the nodes the plan wrote to, before
// the ExtendedDaemonSet's lock is let go: the next pass, of any of its
// replica sets, states them again. The cache's events record them too,
// but a pass may see a written pod in the cache, and forget its
// expectation, before the event's handler has recorded it: the passes of
// the other replica sets, whose views did not change then, would go on
// without the pod.
func (r *ReplicaSetReconciler) journalWrites(eds *v1alpha1.ExtendedDaemonSet, obs *observation, plan rollout.Plan) {
	if r.journal == nil {
		return
	}
	owner := edsKey(eds).String()
	for _, node := range plan.Create {
		r.journal.PodChanged(owner, node)
	}
	for _, d := range plan.Delete {
		r.journal.PodChanged(owner, d.Node)
	}
	for _, u := range plan.UpdateInPlace {
		r.journal.PodChanged(owner, u.Node)
	}
	for _, name := range plan.Reopen {
		if pod := obs.pods[name]; pod != nil {
			r.journal.PodChanged(owner, placement.TargetNode(pod))
		}
	}
}

func (r *ReplicaSetReconciler) viewCheckInterval() time.Duration {
	if r.ViewCheckInterval > 0 {
		return r.ViewCheckInterval
	}
	return DefaultViewCheckInterval
}

// lockExtendedDaemonSet waits for the other reconciles of key's replica sets
// and returns the unlock.
func (r *ReplicaSetReconciler) lockExtendedDaemonSet(key types.NamespacedName) func() {
	m, _ := r.locks.LoadOrStore(key, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// migrationPoll is how often pods of a DaemonSet being migrated from are
// looked at again.
const migrationPoll = 2 * time.Second

// owner returns the ExtendedDaemonSet that controls ers, nil when gone.
func (r *ReplicaSetReconciler) owner(ctx context.Context, ers *v1alpha1.ExtendedDaemonSetReplicaSet) (*v1alpha1.ExtendedDaemonSet, error) {
	ref := metav1.GetControllerOf(ers)
	if ref == nil {
		return nil, nil
	}
	eds := &v1alpha1.ExtendedDaemonSet{}
	err := r.Get(ctx, types.NamespacedName{Namespace: ers.Namespace, Name: ref.Name}, eds)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("getting ExtendedDaemonSet %s: %w", ref.Name, err)
	case eds.UID != ref.UID:
		return nil, nil
	}
	return eds, nil
}

// recordPlacementEvents warns when pods of the replica set newly cannot be
// placed on their node.
func (r *ReplicaSetReconciler) recordPlacementEvents(ers *v1alpha1.ExtendedDaemonSetReplicaSet, before *v1alpha1.ExtendedDaemonSetReplicaSetStatus) {
	if ers.Status.Unschedulable > before.Unschedulable {
		r.Recorder.Eventf(ers, nil, corev1.EventTypeWarning, "FailedPlacement", "Schedule",
			"pods cannot be placed on their node by the scheduler%v", fluxevents.Detail(fmt.Sprintf("%d pods", ers.Status.Unschedulable)))
	}
	if ers.Status.IgnoredUnresponsiveNodes > before.IgnoredUnresponsiveNodes {
		r.Recorder.Eventf(ers, nil, corev1.EventTypeWarning, "IgnoringUnresponsiveNodes", "RollingUpdate",
			"nodes have not been Ready for too long: their agent no longer counts against maxUnavailable%v",
			fluxevents.Detail(fmt.Sprintf("%d nodes", ers.Status.IgnoredUnresponsiveNodes)))
	}
	if ers.Status.NodesInMaintenance > before.NodesInMaintenance {
		r.Recorder.Eventf(ers, nil, corev1.EventTypeNormal, "LeavingNodesInMaintenance", "RollingUpdate",
			"nodes are in maintenance (draining, cordoned, disrupted or going away): their agent is left as it is and no longer counts against maxUnavailable%v",
			fluxevents.Detail(fmt.Sprintf("%d nodes", ers.Status.NodesInMaintenance)))
	}
	if stalled := conditions.Get(ers, v1alpha1.StalledCondition); stalled != nil && stalled.Reason == v1alpha1.ReasonProgressDeadlineExceeded &&
		!pastDeadline(before.Conditions) {
		r.Recorder.Eventf(ers, nil, corev1.EventTypeWarning, v1alpha1.ReasonProgressDeadlineExceeded, "RollingUpdate",
			"replica set %s stalled%v", ers.Name, fluxevents.Detail(stalled.Message))
	}
}

// pastDeadline reports whether conditions say Stalled past the progress
// deadline.
func pastDeadline(conds []metav1.Condition) bool {
	c := apimeta.FindStatusCondition(conds, v1alpha1.StalledCondition)
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == v1alpha1.ReasonProgressDeadlineExceeded
}

// replicaSetsOfObject maps an ExtendedDaemonSet to all its replica sets.
func (r *ReplicaSetReconciler) replicaSetsOfObject(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.replicaSetsOf(ctx, obj.GetNamespace(), obj.GetName())
}

// replicaSetsOfPod maps a pod to the replica sets whose pass it changes
// (podReplicaSets), and records its node in the journal. Waking all the
// ExtendedDaemonSet's replica sets, history included, made the work of one
// pod event grow with the history.
func (r *ReplicaSetReconciler) replicaSetsOfPod(ctx context.Context, pod client.Object) []reconcile.Request {
	name := pod.GetLabels()[v1alpha1.ExtendedDaemonSetNameLabel]
	if name == "" {
		return nil
	}
	if p, ok := pod.(*corev1.Pod); ok && r.journal != nil {
		// Called for the pod before and after an update both: a pod
		// that changed node changed both.
		r.journal.PodChanged(pod.GetNamespace()+"/"+name, placement.TargetNode(p))
	}
	// The cache's own object, not a copy (this runs on every pod event):
	// read, never written.
	eds := &v1alpha1.ExtendedDaemonSet{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: pod.GetNamespace(), Name: name}, eds, client.UnsafeDisableDeepCopy); err != nil {
		if !apierrors.IsNotFound(err) {
			ctrl.LoggerFrom(ctx).Error(err, "reading the ExtendedDaemonSet of a pod", "pod", klog.KObj(pod))
		}
		// Without its ExtendedDaemonSet no pass places pods; the pod's own
		// replica set still counts it.
		eds = nil
	}
	var reqs []reconcile.Request
	for _, ers := range podReplicaSets(pod.GetLabels()[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel], eds) {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: pod.GetNamespace(), Name: ers}})
	}
	return reqs
}

// podReplicaSets are the replica sets a pod of replica set own matters to:
// its own, which counts it, and those that place pods and spend the
// budget (the active one, which replaces the pods of all others, and the
// canary, running or failed, whose nodes it may be on).
func podReplicaSets(own string, eds *v1alpha1.ExtendedDaemonSet) []string {
	names := []string{own}
	if eds != nil {
		names = append(names, eds.Status.ActiveReplicaSet)
		if eds.Status.Canary != nil {
			names = append(names, eds.Status.Canary.ReplicaSet)
		}
	}
	slices.Sort(names)
	return slices.DeleteFunc(slices.Compact(names), func(n string) bool { return n == "" })
}

func (r *ReplicaSetReconciler) replicaSetsOf(ctx context.Context, namespace, eds string) []reconcile.Request {
	if eds == "" {
		return nil
	}
	// Every pod event of a rollout maps here; only names are read, so the
	// cached replica sets are not copied.
	var list v1alpha1.ExtendedDaemonSetReplicaSetList
	if err := r.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels{v1alpha1.ExtendedDaemonSetNameLabel: eds},
		client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing replica sets", "extendedDaemonSet", klog.KRef(namespace, eds))
		return nil
	}
	return store.Requests(list.Items)
}

// replicaSetsOfNode maps a node to the replica sets that place pods (the
// active and canary ones of every ExtendedDaemonSet) and to those with a
// pod on it, whose counts change when the node goes.
func (r *ReplicaSetReconciler) replicaSetsOfNode(ctx context.Context, node client.Object) []reconcile.Request {
	log := ctrl.LoggerFrom(ctx)
	if r.journal != nil {
		r.journal.NodeChanged(node.GetName())
	}
	seen := map[types.NamespacedName]bool{}
	var reqs []reconcile.Request
	add := func(namespace, name string) {
		key := types.NamespacedName{Namespace: namespace, Name: name}
		if name != "" && !seen[key] {
			seen[key] = true
			reqs = append(reqs, reconcile.Request{NamespacedName: key})
		}
	}
	var sets v1alpha1.ExtendedDaemonSetList
	if err := r.List(ctx, &sets, client.UnsafeDisableDeepCopy); err != nil {
		log.Error(err, "listing ExtendedDaemonSets")
		return nil
	}
	for i := range sets.Items {
		eds := &sets.Items[i]
		add(eds.Namespace, eds.Status.ActiveReplicaSet)
		if c := canary.Running(eds); c != nil {
			add(eds.Namespace, c.ReplicaSet)
		}
	}
	pods, err := r.store.PodsOnNode(ctx, node.GetName())
	if err != nil {
		log.Error(err, "listing pods of node", "node", klog.KObj(node))
		return reqs
	}
	for _, pod := range pods {
		add(pod.Namespace, pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel])
	}
	return reqs
}
