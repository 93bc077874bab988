package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/store"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/overrides"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// act carries out a plan: deletions and in-place updates first, then
// creations in doubling batches (1, 2, 4, ...) that stop at the first batch
// with an error, so a quota or admission problem costs one failed call, not
// hundreds. It also opens the in-place readiness gates of pods ready to
// serve, and of old pods whose update does not go on. It returns how many
// writes the API server accepted; refusals are told as warning events, at
// most once per cause and interval.
func (r *ReplicaSetReconciler) act(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet,
	ers *v1alpha1.ExtendedDaemonSetReplicaSet, obs *observation, plan rollout.Plan,
) (int, error) {
	now := r.now()
	for _, node := range plan.FailedNodes {
		r.backoff.Next(backoffKey(eds, node), now)
	}
	done, deleteErr := r.deletePods(ctx, eds, ers, obs, plan.Delete)
	updated, updateErr := r.updateInPlace(ctx, eds, ers, obs, plan.UpdateInPlace)
	opened, gateErr := r.openGates(ctx, eds, ers, obs, plan.Reopen)
	done += updated + opened
	deleteErr = errors.Join(deleteErr, updateErr, gateErr)
	remaining := plan.Create
	if obs.workload {
		// The DaemonSet creates the pods, at its template, on every node
		// that lacks one.
		remaining = nil
	}
	for batch := 1; len(remaining) > 0; batch *= 2 {
		n := min(batch, len(remaining))
		created, err := r.createPods(ctx, eds, ers, obs, remaining[:n])
		done += created
		if err != nil {
			return done, errors.Join(deleteErr, fmt.Errorf("creating pods (%d of %d not attempted): %w", len(remaining)-n, len(plan.Create), err))
		}
		remaining = remaining[n:]
	}
	return done, deleteErr
}

func (r *ReplicaSetReconciler) deletePods(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet, ers *v1alpha1.ExtendedDaemonSetReplicaSet,
	obs *observation, deletions []rollout.Deletion,
) (int, error) {
	return r.writePods(ctx, len(deletions), func(ctx context.Context, i int) (bool, error) {
		d := deletions[i]
		pod := obs.pods[d.Pod]
		// The UID precondition keeps a pod recreated under the same name safe.
		switch err := r.Delete(ctx, pod, client.Preconditions{UID: &pod.UID}); {
		case err == nil:
			r.expectations.Deleted(edsKey(eds), pod, r.now())
			return true, nil
		case apierrors.IsNotFound(err):
			return false, nil
		default:
			// Counted as deleted until the cache says: believed still
			// available, it would let another pod go.
			r.refused(ers, "FailedDelete", "Delete", err, func() { r.expectations.MayHaveDeleted(edsKey(eds), pod, r.now()) })
			return false, fmt.Errorf("deleting pod %s (%s) on node %s: %w", pod.Name, d.Reason, d.Node, err)
		}
	})
}

func (r *ReplicaSetReconciler) createPods(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet, ers *v1alpha1.ExtendedDaemonSetReplicaSet,
	obs *observation, nodes []string,
) (int, error) {
	return r.writePods(ctx, len(nodes), func(ctx context.Context, i int) (bool, error) {
		pod, err := r.newPod(eds, ers, obs, nodes[i])
		if err == nil {
			if err = r.Create(ctx, pod); err != nil {
				// The pod may exist under its name: expected as if created
				// now, no second one goes to the node until the cache shows
				// it or the expectation expires.
				mayHave := func() {
					pod.CreationTimestamp = metav1.NewTime(r.now())
					r.expectations.MayHaveCreated(edsKey(eds), pod, r.now())
				}
				err = withoutGeneratedName(err)
				r.refused(ers, "FailedCreate", "Create", err, mayHave)
			}
		}
		if err != nil {
			return false, fmt.Errorf("creating pod on node %s: %w", nodes[i], err)
		}
		r.expectations.Created(edsKey(eds), pod, r.now())
		return true, nil
	})
}

// newPod is the pod of a replica set for one node, owned by the replica
// set and labelled with both owners' names and the template hash.
// Container resources come from the settings and node annotations of the
// node; a malformed annotation is reported as an event and skipped.
func (r *ReplicaSetReconciler) newPod(eds *v1alpha1.ExtendedDaemonSet, ers *v1alpha1.ExtendedDaemonSetReplicaSet, obs *observation, node string) (*corev1.Pod, error) {
	pod := placement.NewPod(&ers.Spec.Template, node, map[string]string{
		v1alpha1.ExtendedDaemonSetNameLabel:           eds.Name,
		v1alpha1.ExtendedDaemonSetReplicaSetNameLabel: ers.Name,
		v1alpha1.TemplateHashLabel:                    ers.Spec.TemplateGeneration,
	})
	if n := obs.nodes[node]; n != nil {
		resources, err := overrides.ForNode(eds.Namespace, eds.Name, n, obs.settings)
		if err != nil {
			r.Recorder.Eventf(ers, n, corev1.EventTypeWarning, "InvalidResourceOverride", "Create", "%s", err.Error())
		}
		overrides.Apply(pod, resources)
	}
	pod.Namespace = ers.Namespace
	pod.GenerateName = ers.Name + "-"
	// Named here, as the API server would name it from generateName, so
	// that a creation whose answer is lost can be expected by name.
	pod.Name = generateName(pod.GenerateName)
	pod.Spec.NodeName = ""
	if inPlaceGate(eds) && !gated(pod) {
		// A readiness gate can only be set at creation.
		pod.Spec.ReadinessGates = append(pod.Spec.ReadinessGates, corev1.PodReadinessGate{ConditionType: v1alpha1.InPlaceUpdateReadyCondition})
	}
	if err := controllerutil.SetControllerReference(ers, pod, r.Scheme()); err != nil {
		return nil, fmt.Errorf("owning pod: %w", err)
	}
	return pod, nil
}

// generateName is the API server's generated name: base, cut to leave
// room in 63 characters, and 5 random ones.
func generateName(base string) string {
	const maxLength, randomLength = 63, 5
	if len(base) > maxLength-randomLength {
		base = base[:maxLength-randomLength]
	}
	return base + utilrand.String(randomLength)
}

func (r *ReplicaSetReconciler) now() time.Time { return store.Now(r.Clock) }
