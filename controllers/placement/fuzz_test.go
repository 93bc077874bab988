package placement

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fitFuzz is a node and a template the fuzzer draws: one taint and one
// toleration of any key, operator, value and effect, a node selector and a
// required affinity term of any operator and values, and standard taints
// picked by flags.
type fitFuzz struct {
	taintKey, taintValue, taintEffect    string
	tolKey, tolOp, tolValue, tolEffect   string
	affinityOp, affinityValues, nodeName string
	flags                                uint8
}

func (s fitFuzz) bit(i int) bool { return s.flags>>i&1 == 1 }

func (s fitFuzz) node() *corev1.Node {
	taints := []corev1.Taint{{Key: s.taintKey, Value: s.taintValue, Effect: corev1.TaintEffect(s.taintEffect)}}
	if s.bit(0) {
		taints = append(taints, taint(corev1.TaintNodeUnschedulable, corev1.TaintEffectNoSchedule))
	}
	if s.bit(1) {
		taints = append(taints, taint(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute))
	}
	if s.bit(2) {
		taints = append(taints, taint(corev1.TaintNodeNetworkUnavailable, corev1.TaintEffectNoSchedule))
	}
	return node(s.nodeName, map[string]string{"zone": s.taintValue, s.taintKey: s.tolValue}, taints...)
}

func (s fitFuzz) template() *corev1.PodTemplateSpec {
	return template(func(spec *corev1.PodSpec) {
		spec.HostNetwork = s.bit(3)
		if s.bit(4) {
			spec.Tolerations = []corev1.Toleration{{
				Key: s.tolKey, Operator: corev1.TolerationOperator(s.tolOp), Value: s.tolValue, Effect: corev1.TaintEffect(s.tolEffect),
			}}
		}
		if s.bit(5) {
			spec.NodeSelector = map[string]string{"zone": s.tolValue}
		}
		if s.bit(6) {
			spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{
						Key: s.tolKey, Operator: corev1.NodeSelectorOperator(s.affinityOp), Values: strings.Split(s.affinityValues, ","),
					}},
				}}},
			}}
		}
	})
}

// FuzzNodeFit matches templates against nodes the fuzzer draws, with
// tolerations, taints and affinities of any operator and effect. NodeFit
// must not panic, must never place a pod where one may not stay, nor leave
// a node for losing a taint; it leaves the template alone. The pod NewPod
// builds for a node the template fits fits that node and no other, is
// pinned to it, and adding the daemon tolerations again changes nothing.
func FuzzNodeFit(f *testing.F) {
	f.Add("dedicated", "agents", "NoSchedule", "dedicated", "Equal", "agents", "NoSchedule", "In", "a,b", "n1", uint8(0x10))
	f.Add("dedicated", "agents", "NoExecute", "", "Exists", "", "", "Exists", "", "n1", uint8(0x13))
	f.Add("k", "v", "PreferNoSchedule", "k", "Sometimes", "v", "Never", "Gt", "x", "n1", uint8(0x7f))
	f.Add("zone", "10", "NoSchedule", "zone", "Equal", "10", "", "Lt", "11", "metadata.name", uint8(0x74))
	f.Add("", "", "", "", "", "", "", "", "", "", uint8(0xff))
	f.Fuzz(func(t *testing.T, taintKey, taintValue, taintEffect, tolKey, tolOp, tolValue, tolEffect, affinityOp, affinityValues, nodeName string, flags uint8) {
		s := fitFuzz{taintKey, taintValue, taintEffect, tolKey, tolOp, tolValue, tolEffect, affinityOp, affinityValues, nodeName, flags}
		n, tmpl := s.node(), s.template()
		pristine := tmpl.DeepCopy()
		fit := NodeFit(tmpl, n)
		if !reflect.DeepEqual(tmpl, pristine) {
			t.Fatalf("NodeFit modified the template")
		}
		if fit.ShouldRun && !fit.ShouldContinueRunning {
			t.Fatalf("NodeFit = %+v: a pod is placed where it may not stay", fit)
		}
		untainted := n.DeepCopy()
		untainted.Spec.Taints = nil
		if loose := NodeFit(tmpl, untainted); fit.ShouldRun && !loose.ShouldRun || fit.ShouldContinueRunning && !loose.ShouldContinueRunning {
			t.Fatalf("NodeFit = %+v, and %+v once the node loses its taints", fit, loose)
		}

		tolerations := WithDaemonTolerations(tmpl.Spec.Tolerations, tmpl.Spec.HostNetwork)
		if !slices.Equal(tolerations[:len(tmpl.Spec.Tolerations)], tmpl.Spec.Tolerations) {
			t.Fatalf("WithDaemonTolerations(%+v) dropped or changed one: %+v", tmpl.Spec.Tolerations, tolerations)
		}
		if again := WithDaemonTolerations(tolerations, tmpl.Spec.HostNetwork); len(again) != len(tolerations) {
			t.Fatalf("WithDaemonTolerations adds %d tolerations to its own result", len(again)-len(tolerations))
		}

		pod := NewPod(tmpl, n.Name, map[string]string{"extendeddaemonset.io/replicaset": "rs-1"})
		if !reflect.DeepEqual(tmpl, pristine) {
			t.Fatalf("NewPod modified the template")
		}
		if got := TargetNode(pod); got != n.Name {
			t.Fatalf("NewPod for %q targets %q", n.Name, got)
		}
		if pod.Labels["extendeddaemonset.io/replicaset"] != "rs-1" {
			t.Fatalf("NewPod lost its labels: %v", pod.Labels)
		}
		if !fit.ShouldRun {
			return
		}
		asTemplate := &corev1.PodTemplateSpec{Spec: pod.Spec}
		if got := NodeFit(asTemplate, n); !got.ShouldRun {
			t.Fatalf("the template fits %q, its pod does not: %+v", n.Name, got)
		}
		elsewhere := n.DeepCopy()
		elsewhere.Name += "-elsewhere"
		if got := NodeFit(asTemplate, elsewhere); got.ShouldRun {
			t.Fatalf("the pod for %q also fits %q", n.Name, elsewhere.Name)
		}
	})
}

// FuzzPodAndNodeState reads the node and pod conditions the fuzzer draws,
// with any status, reason and time: a node is unresponsive only while not
// Ready, and stays so as time passes; a pod not Ready has no ready time; a
// pod is unschedulable only as the scheduler says.
func FuzzPodAndNodeState(f *testing.F) {
	f.Add("True", "", int64(time.Hour), int64(5*time.Minute), int64(0), true)
	f.Add("False", "Unschedulable", int64(6*time.Minute), int64(5*time.Minute), int64(time.Minute), true)
	f.Add("Unknown", "", int64(-time.Hour), int64(-1), int64(1<<62), false)
	f.Add("", "", int64(0), int64(0), int64(0), false)
	f.Fuzz(func(t *testing.T, status, reason string, since, grace, later int64, transitioned bool) {
		now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
		at := metav1.NewTime(now.Add(-time.Duration(since)))
		if !transitioned {
			at = metav1.Time{}
		}
		cond := corev1.ConditionStatus(status)
		n := &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue},
			{Type: corev1.NodeReady, Status: cond, LastTransitionTime: at},
		}}}
		unresponsive := Unresponsive(n, now, time.Duration(grace))
		if unresponsive && cond == corev1.ConditionTrue {
			t.Fatalf("a Ready node is unresponsive")
		}
		if unresponsive && !Unresponsive(n, now.Add(time.Duration(max(later, 0))), time.Duration(grace)) {
			t.Fatalf("an unresponsive node is responsive again %s later, nothing else changed", time.Duration(later))
		}

		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: cond, Reason: reason},
				{Type: corev1.PodReady, Status: cond, LastTransitionTime: at},
			}},
		}
		readySince := ReadySince(pod)
		if cond != corev1.ConditionTrue && !readySince.IsZero() {
			t.Fatalf("a pod not Ready is ready since %s", readySince)
		}
		if cond == corev1.ConditionTrue && readySince.IsZero() {
			t.Fatalf("a Ready pod has no ready time")
		}
		if Unschedulable(pod) != (cond == corev1.ConditionFalse && reason == corev1.PodReasonUnschedulable) {
			t.Fatalf("Unschedulable = %t for PodScheduled %s, reason %q", Unschedulable(pod), cond, reason)
		}
	})
}
