package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// podPatch is a JSON patch of a pod and the pod as it leaves it.
type podPatch struct {
	ops      []patchOp
	expected *corev1.Pod
	// status: the patch is of the status subresource.
	status bool
	what   string
}

type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// basedOn starts a patch of pod with its resourceVersion: the API server
// refuses the patch with a conflict when the pod changed since it was read,
// so that a patch planned on a stale cache never clobbers a newer pod.
func basedOn(pod *corev1.Pod, what string) *podPatch {
	return &podPatch{
		ops:      []patchOp{{Op: "replace", Path: "/metadata/resourceVersion", Value: pod.ResourceVersion}},
		expected: pod.DeepCopy(),
		what:     what,
	}
}

func (p *podPatch) add(path string, value any) {
	p.ops = append(p.ops, patchOp{Op: "add", Path: path, Value: value})
}

func (p *podPatch) replace(path string, value any) {
	p.ops = append(p.ops, patchOp{Op: "replace", Path: path, Value: value})
}

// setMapKey sets key in the map at path (labels, annotations), creating
// the map when the pod has none.
func (p *podPatch) setMapKey(path string, m *map[string]string, key, value string) {
	if *m == nil {
		*m = map[string]string{}
		p.add(path, map[string]string{key: value})
	} else {
		p.add(path+"/"+escapePointer(key), value)
	}
	(*m)[key] = value
}

// escapePointer escapes a map key for a JSON pointer (RFC 6901).
func escapePointer(key string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}

// inPlacePatch moves pod to ers in one patch: the template's images, the
// labels and controller reference that name the replica set, and an
// annotation naming the one it came from.
func inPlacePatch(pod *corev1.Pod, ers *v1alpha1.ExtendedDaemonSetReplicaSet, owner metav1.OwnerReference) *podPatch {
	p := basedOn(pod, "updating pod in place")
	e := p.expected
	template := &ers.Spec.Template.Spec
	p.setImages("/spec/containers", e.Spec.Containers, template.Containers)
	p.setImages("/spec/initContainers", e.Spec.InitContainers, template.InitContainers)
	p.setMapKey("/metadata/annotations", &e.Annotations, v1alpha1.InPlaceUpdatedFromAnnotation, pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel])
	p.setMapKey("/metadata/labels", &e.Labels, v1alpha1.ExtendedDaemonSetReplicaSetNameLabel, ers.Name)
	p.setMapKey("/metadata/labels", &e.Labels, v1alpha1.TemplateHashLabel, ers.Spec.TemplateGeneration)
	refs := []metav1.OwnerReference{owner}
	for _, ref := range e.OwnerReferences {
		if ref.Controller == nil || !*ref.Controller {
			refs = append(refs, ref)
		}
	}
	e.OwnerReferences = refs
	p.add("/metadata/ownerReferences", refs)
	return p
}

// setImages sets the image of each container of the pod (at path) to that
// of the template's container of the same name.
func (p *podPatch) setImages(path string, containers, template []corev1.Container) {
	for i := range containers {
		for j := range template {
			if template[j].Name == containers[i].Name && template[j].Image != containers[i].Image {
				containers[i].Image = template[j].Image
				p.replace(fmt.Sprintf("%s/%d/image", path, i), template[j].Image)
			}
		}
	}
}

// gatePatch sets the pod's in-place readiness gate condition.
func gatePatch(pod *corev1.Pod, status corev1.ConditionStatus, reason string, now metav1.Time) *podPatch {
	what := "opening the in-place readiness gate of pod"
	if status != corev1.ConditionTrue {
		what = "closing the in-place readiness gate of pod"
	}
	p := basedOn(pod, what)
	p.status = true
	cond := corev1.PodCondition{Type: v1alpha1.InPlaceUpdateReadyCondition, Status: status, Reason: reason, LastTransitionTime: now}
	st := &p.expected.Status
	switch i := indexOfCondition(st.Conditions, cond.Type); {
	case i >= 0:
		st.Conditions[i] = cond
		p.replace(fmt.Sprintf("/status/conditions/%d", i), cond)
	case st.Conditions == nil:
		st.Conditions = []corev1.PodCondition{cond}
		p.add("/status/conditions", st.Conditions)
	default:
		st.Conditions = append(st.Conditions, cond)
		p.add("/status/conditions/-", cond)
	}
	return p
}

func indexOfCondition(conds []corev1.PodCondition, t corev1.PodConditionType) int {
	for i := range conds {
		if conds[i].Type == t {
			return i
		}
	}
	return -1
}

// Reasons of the in-place readiness gate condition.
const (
	gateReasonUpdating = "InPlaceUpdate"
	gateReasonReady    = "ContainersReady"
	gateReasonDeferred = "InPlaceUpdateDeferred"
)

// updateInPlace carries out the plan's in-place updates, one write per pod
// and step: a pod behind a gate that is open has its gate closed, and is
// patched once the kubelet has taken it out of service; any other is
// patched at once.
func (r *ReplicaSetReconciler) updateInPlace(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet, ers *v1alpha1.ExtendedDaemonSetReplicaSet,
	obs *observation, updates []rollout.InPlaceUpdate,
) (int, error) {
	if len(updates) == 0 {
		return 0, nil
	}
	gvk, err := apiutil.GVKForObject(ers, r.Scheme())
	if err != nil {
		return 0, fmt.Errorf("owning pods: %w", err)
	}
	owner := *metav1.NewControllerRef(ers, gvk)
	patches := make([]*podPatch, len(updates))
	for i, u := range updates {
		pod := obs.pods[u.Pod]
		if gated(pod) && !gateClosed(pod) {
			patches[i] = gatePatch(pod, corev1.ConditionFalse, gateReasonUpdating, metav1.NewTime(r.now()))
		} else {
			patches[i] = inPlacePatch(pod, ers, owner)
		}
	}
	return r.patchPods(ctx, eds, ers, obs, patches)
}

// openGates opens the in-place readiness gate of the replica set's pods
// whose containers run its images and are ready: created with the gate, or
// back from an update. It also opens again the gates of the old pods in
// reopen, closed for an update that does not go on now, so that they serve
// meanwhile. Only the replica set that takes care of a pod's node does: a
// replica set without a role would open again the gate of its pod that the
// one now in charge closed to update it.
func (r *ReplicaSetReconciler) openGates(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet, ers *v1alpha1.ExtendedDaemonSetReplicaSet,
	obs *observation, reopen []string,
) (int, error) {
	if obs.role != v1alpha1.ReplicaSetActive && obs.role != v1alpha1.ReplicaSetCanary {
		return 0, nil
	}
	var patches []*podPatch
	for _, pod := range obs.pods {
		if pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel] == ers.Name && mayOpenGate(pod) {
			patches = append(patches, gatePatch(pod, corev1.ConditionTrue, gateReasonReady, metav1.NewTime(r.now())))
		}
	}
	for _, name := range reopen {
		if pod := obs.pods[name]; pod != nil {
			patches = append(patches, gatePatch(pod, corev1.ConditionTrue, gateReasonDeferred, metav1.NewTime(r.now())))
		}
	}
	return r.patchPods(ctx, eds, ers, obs, patches)
}

// patchPods applies the patches, as many at once as writes may be, and
// records each for the reconciles to come.
func (r *ReplicaSetReconciler) patchPods(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet, ers *v1alpha1.ExtendedDaemonSetReplicaSet,
	obs *observation, patches []*podPatch,
) (int, error) {
	return r.writePods(ctx, len(patches), func(ctx context.Context, i int) (bool, error) {
		p := patches[i]
		pod := obs.pods[p.expected.Name]
		patched, err := r.patchPod(ctx, pod, p)
		switch {
		case err == nil:
			r.expectations.Patched(edsKey(eds), patched, pod.ResourceVersion, r.now())
			return true, nil
		case apierrors.IsNotFound(err):
			return false, nil
		case apierrors.IsConflict(err):
			// Read from a cache that lagged: the next reconcile reads the
			// pod as it is.
		default:
			r.refused(ers, "FailedUpdate", "Update", err, func() {
				r.expectations.MayHavePatched(edsKey(eds), p.expected, pod.ResourceVersion, r.now())
			})
		}
		return false, fmt.Errorf("%s %s: %w", p.what, pod.Name, err)
	})
}

// patchPod applies one patch to pod and returns the pod the API server
// returned.
func (r *ReplicaSetReconciler) patchPod(ctx context.Context, pod *corev1.Pod, p *podPatch) (*corev1.Pod, error) {
	data, err := json.Marshal(p.ops)
	if err != nil {
		return nil, fmt.Errorf("encoding patch: %w", err)
	}
	patched := pod.DeepCopy()
	patch := client.RawPatch(types.JSONPatchType, data)
	if p.status {
		err = r.Status().Patch(ctx, patched, patch, client.FieldOwner(FieldOwner))
	} else {
		err = r.Patch(ctx, patched, patch, client.FieldOwner(FieldOwner))
	}
	if err != nil {
		return nil, err
	}
	return patched, nil
}
