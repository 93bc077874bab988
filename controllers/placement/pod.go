package placement

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// nodeNameField is the node field a required affinity term can match.
const nodeNameField = "metadata.name"

// NewPod returns the pod of template for one node: the template's own
// metadata and spec, the given labels added, the standard DaemonSet
// tolerations, and a required node affinity on the node name so the
// scheduler binds it there and nowhere else. The caller sets the owner,
// name and namespace.
func NewPod(template *corev1.PodTemplateSpec, nodeName string, labels map[string]string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: *template.ObjectMeta.DeepCopy(),
		Spec:       *template.Spec.DeepCopy(),
	}
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	for k, v := range labels {
		pod.Labels[k] = v
	}
	pod.Spec.Tolerations = WithDaemonTolerations(pod.Spec.Tolerations, pod.Spec.HostNetwork)
	// The affinity places the pod; a node name in the template (the API
	// refuses it, but one stored before may remain) would bind every pod
	// to that one node.
	pod.Spec.NodeName = ""
	pod.Spec.Affinity = pinToNode(pod.Spec.Affinity, nodeName)
	return pod
}

// pinToNode replaces the required node affinity with a single term on the
// node name: the node already matched the template's own terms, and a term
// list is ORed, so keeping them would let the pod land elsewhere.
func pinToNode(affinity *corev1.Affinity, nodeName string) *corev1.Affinity {
	if affinity == nil {
		affinity = &corev1.Affinity{}
	}
	if affinity.NodeAffinity == nil {
		affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{
				Key: nodeNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{nodeName},
			}},
		}},
	}
	return affinity
}

// TargetNode is the node a pod is bound to or, before the scheduler binds
// it, the node its affinity pins it to; empty when neither.
func TargetNode(pod *corev1.Pod) string {
	if pod.Spec.NodeName != "" {
		return pod.Spec.NodeName
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, req := range term.MatchFields {
			if req.Key == nodeNameField && req.Operator == corev1.NodeSelectorOpIn && len(req.Values) == 1 {
				return req.Values[0]
			}
		}
	}
	return ""
}

// PodReady says whether the pod's Ready condition is True: the one
// definition of a ready pod every decision shares.
func PodReady(pod *corev1.Pod) bool {
	c := podReadyCondition(pod)
	return c != nil && c.Status == corev1.ConditionTrue
}

// ReadySince is when the pod became ready, zero when it is not ready. A
// ready condition without a transition time counts from the pod's creation.
func ReadySince(pod *corev1.Pod) metav1.Time {
	switch c := podReadyCondition(pod); {
	case !PodReady(pod):
		return metav1.Time{}
	case c.LastTransitionTime.IsZero():
		return pod.CreationTimestamp
	default:
		return c.LastTransitionTime
	}
}

// podReadyCondition is the pod's Ready condition, nil when it has none.
func podReadyCondition(pod *corev1.Pod) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodReady {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// Unschedulable reports whether the scheduler could not place the pod.
func Unschedulable(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
		}
	}
	return false
}
