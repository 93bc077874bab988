package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// An in-place update patches the images of a running pod and moves it to
// the new replica set, in one write; the pod is unavailable until its
// containers report the new images and it is ready again. With
// inPlaceReadinessGate, pods carry a readiness gate the controller closes
// first, so that the pod leaves Service endpoints before its containers
// restart, and opens once they are ready; or opens again, the images
// untouched, when the update does not go on after all (rollout.Plan.Reopen).

// inPlaceMode reports whether the ExtendedDaemonSet updates pods in place
// when it can.
func inPlaceMode(eds *v1alpha1.ExtendedDaemonSet) bool {
	return eds.Spec.Strategy.RollingUpdate.Type == v1alpha1.RollingUpdateInPlaceIfPossible
}

// inPlaceGate reports whether new pods get the in-place readiness gate.
func inPlaceGate(eds *v1alpha1.ExtendedDaemonSet) bool {
	return inPlaceMode(eds) && eds.Spec.Strategy.RollingUpdate.InPlaceReadinessGate
}

// onlyImagesDiffer reports whether a pod of template from becomes a pod of
// template to by changing container and init container images, the only
// fields of a running pod's containers the API lets change. Containers are
// matched by position and must keep their names.
func onlyImagesDiffer(from, to *corev1.PodTemplateSpec) bool {
	if len(from.Spec.Containers) != len(to.Spec.Containers) || len(from.Spec.InitContainers) != len(to.Spec.InitContainers) {
		return false
	}
	withImages := from.DeepCopy()
	for _, pair := range []struct{ dst, src []corev1.Container }{
		{withImages.Spec.Containers, to.Spec.Containers},
		{withImages.Spec.InitContainers, to.Spec.InitContainers},
	} {
		for i := range pair.dst {
			pair.dst[i].Image = pair.src[i].Image
		}
	}
	return equality.Semantic.DeepEqual(withImages, to)
}

// imagesPending reports whether a pod updated in place still runs an image
// it no longer specifies, or does not say yet what it runs. Init containers that ran to completion are not
// run again on a running pod, so only restartable (sidecar) ones count.
// Pods never updated in place are taken at their word: a runtime may
// report an image under another name than the pod gives.
func imagesPending(pod *corev1.Pod) bool {
	if _, updated := pod.Annotations[v1alpha1.InPlaceUpdatedFromAnnotation]; !updated {
		return false
	}
	pending := func(containers []corev1.Container, statuses []corev1.ContainerStatus, sidecarsOnly bool) bool {
		for i := range containers {
			c := &containers[i]
			if sidecarsOnly && (c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways) {
				continue
			}
			// A container the kubelet reports nothing of yet runs nothing
			// yet.
			j := slices.IndexFunc(statuses, func(s corev1.ContainerStatus) bool { return s.Name == c.Name })
			if j < 0 || !runs(c.Image, &statuses[j]) {
				return true
			}
		}
		return false
	}
	return pending(pod.Spec.Containers, pod.Status.ContainerStatuses, false) ||
		pending(pod.Spec.InitContainers, pod.Status.InitContainerStatuses, true)
}

// runs reports whether a container's status says it runs image: the same
// reference, or the digest image pins.
func runs(image string, status *corev1.ContainerStatus) bool {
	if _, digest, pinned := strings.Cut(image, "@"); pinned && strings.HasSuffix(status.ImageID, "@"+digest) {
		return true
	}
	return sameImage(image, status.Image)
}

// sameImage compares an image as a pod gives it with the one its status
// reports, which some runtimes qualify ("nginx" as
// "docker.io/library/nginx:latest").
func sameImage(spec, status string) bool {
	return spec == status || qualifiedImage(spec) == qualifiedImage(status)
}

// qualifiedImage is an image reference with its default registry, library
// path and tag made explicit.
func qualifiedImage(image string) string {
	name, digest, hasDigest := strings.Cut(image, "@")
	if slash := strings.LastIndex(name, "/"); !hasDigest && !strings.Contains(name[slash+1:], ":") {
		name += ":latest"
	}
	first, _, hasPath := strings.Cut(name, "/")
	switch {
	case !hasPath:
		name = "docker.io/library/" + name
	case !strings.ContainsAny(first, ".:") && first != "localhost":
		name = "docker.io/" + name
	}
	if hasDigest {
		return name + "@" + digest
	}
	return name
}

// podCondition returns the pod's condition of type t, nil when absent.
func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

func conditionTrue(pod *corev1.Pod, t corev1.PodConditionType) bool {
	c := podCondition(pod, t)
	return c != nil && c.Status == corev1.ConditionTrue
}

// gated reports whether the pod was created with the in-place readiness
// gate.
func gated(pod *corev1.Pod) bool {
	for _, g := range pod.Spec.ReadinessGates {
		if g.ConditionType == v1alpha1.InPlaceUpdateReadyCondition {
			return true
		}
	}
	return false
}

// gateClosed reports whether the pod's in-place readiness gate holds it
// out of service; a gate whose condition is not set yet holds it too, as
// the kubelet sees it.
func gateClosed(pod *corev1.Pod) bool {
	return gated(pod) && !conditionTrue(pod, v1alpha1.InPlaceUpdateReadyCondition)
}

// closedForUpdate reports whether the pod's gate was closed to update it
// in place and its containers are not in the middle of an update: the gate
// the plan reopens when that update does not go on.
func closedForUpdate(pod *corev1.Pod) bool {
	c := podCondition(pod, v1alpha1.InPlaceUpdateReadyCondition)
	return gated(pod) && c != nil && c.Status != corev1.ConditionTrue && c.Reason == gateReasonUpdating && !imagesPending(pod)
}

// draining reports whether the pod's gate was closed for an in-place
// update and the kubelet has not yet taken it out of service: its images
// are patched once it has.
func draining(pod *corev1.Pod) bool {
	return gateClosed(pod) && placement.PodReady(pod)
}

// updating reports whether the pod has not come back from an in-place
// update: its containers do not run its images yet or, behind a closed
// gate, are not ready yet. A gated pod just created waits likewise.
func updating(pod *corev1.Pod) bool {
	return imagesPending(pod) || (gateClosed(pod) && !conditionTrue(pod, corev1.ContainersReady))
}

// mayOpenGate reports whether the controller opens the pod's closed gate:
// it runs its images and its containers are ready.
func mayOpenGate(pod *corev1.Pod) bool {
	return gateClosed(pod) && pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodRunning &&
		!imagesPending(pod) && conditionTrue(pod, corev1.ContainersReady)
}

// inPlaceReadySince is when a pod updated in place became ready again: its
// Ready condition may never have left True if the kubelet restarted its
// containers between two status updates, so the start of its newest
// container counts too.
func inPlaceReadySince(pod *corev1.Pod, readySince time.Time) time.Time {
	if readySince.IsZero() {
		return readySince
	}
	if _, updated := pod.Annotations[v1alpha1.InPlaceUpdatedFromAnnotation]; !updated {
		return readySince
	}
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for _, s := range statuses {
			if r := s.State.Running; r != nil && r.StartedAt.After(readySince) {
				readySince = r.StartedAt.Time
			}
		}
	}
	return readySince
}

// updatableBy names the replica sets whose pods ers updates in place:
// those whose template differs from ers's only in images.
func (r *ReplicaSetReconciler) updatableBy(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet,
	ers *v1alpha1.ExtendedDaemonSetReplicaSet,
) (map[string]bool, error) {
	var sets v1alpha1.ExtendedDaemonSetReplicaSetList
	if err := r.List(ctx, &sets, client.InNamespace(eds.Namespace), client.MatchingLabels{v1alpha1.ExtendedDaemonSetNameLabel: eds.Name},
		client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing replica sets: %w", err)
	}
	updatable := map[string]bool{}
	for i := range sets.Items {
		if from := &sets.Items[i]; from.Name != ers.Name && onlyImagesDiffer(&from.Spec.Template, &ers.Spec.Template) {
			updatable[from.Name] = true
		}
	}
	return updatable, nil
}

// markInPlace flags the old pods of obs that can be updated in place: those
// of the updatable replica sets. Pods of no replica set (a DaemonSet's being
// migrated) are replaced.
func markInPlace(obs *observation, updatable map[string]bool) {
	if len(updatable) == 0 {
		return
	}
	for _, pods := range obs.input.Pods {
		for i := range pods {
			if p := &pods[i]; !p.New {
				p.InPlace = updatable[obs.pods[p.Name].Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel]]
			}
		}
	}
}
