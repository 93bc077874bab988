// Package placement says which nodes a pod template belongs on and builds
// the pod for one node, the way the upstream DaemonSet controller does: the
// scheduler binds the pod through a required node affinity on the node name,
// and node agents tolerate the taints a node gets when it is under pressure.
package placement

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// Fit is what a template says about one node.
type Fit struct {
	// ShouldRun: a pod of the template is placed on the node.
	ShouldRun bool
	// ShouldContinueRunning: a pod already on the node may stay. A node
	// that only gained an untolerated NoSchedule taint keeps its pod.
	ShouldContinueRunning bool
}

// NodeFit matches a pod template against a node: node selector and required
// node affinity, then taints against the template's tolerations plus the
// standard DaemonSet tolerations.
func NodeFit(template *corev1.PodTemplateSpec, node *corev1.Node) Fit {
	return NewFitter(template).Fit(node)
}

// Fitter matches one template against many nodes: the tolerations and
// the node affinity are worked out once, not once per node.
type Fitter struct {
	affinity    nodeaffinity.RequiredNodeAffinity
	tolerations []corev1.Toleration
	// placing are tolerations plus the node lifecycle's NoSchedule
	// taints: what ShouldRun is judged with.
	placing []corev1.Toleration
}

// NewFitter prepares template for matching against nodes.
func NewFitter(template *corev1.PodTemplateSpec) *Fitter {
	pod := &corev1.Pod{Spec: template.Spec}
	pod.Spec.Tolerations = WithDaemonTolerations(template.Spec.Tolerations, template.Spec.HostNetwork)
	return &Fitter{
		affinity:    nodeaffinity.GetRequiredNodeAffinity(pod),
		tolerations: pod.Spec.Tolerations,
		placing:     append(slices.Clip(pod.Spec.Tolerations), nodeLifecycleNoSchedule...),
	}
}

// SameFit reports whether templates a and b fit the same nodes: the fields
// a Fitter reads (node selector, affinity, tolerations, host network) are
// equal.
func SameFit(a, b *corev1.PodTemplateSpec) bool {
	return a.Spec.HostNetwork == b.Spec.HostNetwork && equality.Semantic.DeepEqual(a.Spec.NodeSelector, b.Spec.NodeSelector) &&
		equality.Semantic.DeepEqual(a.Spec.Affinity, b.Spec.Affinity) && equality.Semantic.DeepEqual(a.Spec.Tolerations, b.Spec.Tolerations)
}

// nodeLifecycleNoSchedule are the NoSchedule taints the node lifecycle
// controller gives a node that is not Ready (and kubelets register with):
// a node that is down, not one the agent does not belong on. They keep the
// pods off the node, not the node out of the nodes that should run one:
// otherwise a node whose agent the rollout just took down would stop
// counting against maxUnavailable as soon as it turned NotReady, and the
// rollout would take the next node down. Its new pod waits, Pending, for
// the node to come back, and counts as unavailable meanwhile, which is
// the truth; past the unresponsive grace the node is left out
// (Unresponsive). Pods never carry these tolerations: the scheduler
// still waits for the node.
var nodeLifecycleNoSchedule = []corev1.Toleration{
	{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
}

// Fit is what the template says about node.
func (f *Fitter) Fit(node *corev1.Node) Fit {
	// An affinity that does not parse matches no node, as for upstream.
	if fits, err := f.affinity.Match(node); err != nil || !fits {
		return Fit{}
	}
	if !untolerated(node, f.placing, corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute) {
		return Fit{ShouldRun: true, ShouldContinueRunning: true}
	}
	return Fit{ShouldContinueRunning: !untolerated(node, f.tolerations, corev1.TaintEffectNoExecute)}
}

func untolerated(node *corev1.Node, tolerations []corev1.Toleration, effects ...corev1.TaintEffect) bool {
	_, found := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, tolerations,
		func(t *corev1.Taint) bool {
			for _, e := range effects {
				if t.Effect == e {
					return true
				}
			}
			return false
		}, false)
	return found
}

// daemonTolerations are the tolerations upstream gives every DaemonSet pod:
// a node agent keeps running on a node that is not ready, unreachable,
// under pressure or cordoned.
var daemonTolerations = []corev1.Toleration{
	{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeDiskPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodePIDPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
}

// hostNetworkToleration lets host-network agents (a CNI among them) start
// on a node whose network is not configured yet.
var hostNetworkToleration = corev1.Toleration{
	Key: corev1.TaintNodeNetworkUnavailable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule,
}

// WithDaemonTolerations returns tolerations plus the standard DaemonSet
// tolerations it lacks; tolerations itself is not modified.
func WithDaemonTolerations(tolerations []corev1.Toleration, hostNetwork bool) []corev1.Toleration {
	out := append([]corev1.Toleration(nil), tolerations...)
	add := daemonTolerations
	if hostNetwork {
		add = append(add[:len(add):len(add)], hostNetworkToleration)
	}
	for _, t := range add {
		if !hasToleration(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func hasToleration(list []corev1.Toleration, t corev1.Toleration) bool {
	for i := range list {
		if list[i].MatchToleration(&t) {
			return true
		}
	}
	return false
}
