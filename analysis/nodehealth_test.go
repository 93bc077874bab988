package analysis

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// The times of a node-health scenario: the change reached the judged
// nodes at change; before and after are on either side of it; the
// measurement is taken at nhNow.
var (
	change = t0
	before = t0.Add(-time.Hour)
	after  = t0.Add(2 * time.Minute)
	nhNow  = t0.Add(10 * time.Minute)
)

// healthyNode is a Ready node whose conditions last changed before the
// change, with extra conditions appended.
func healthyNode(name string, extra ...corev1.NodeCondition) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	n.Status.Conditions = append([]corev1.NodeCondition{
		nodeCond(corev1.NodeReady, corev1.ConditionTrue, before),
		nodeCond(corev1.NodeNetworkUnavailable, corev1.ConditionFalse, before),
		nodeCond(corev1.NodeMemoryPressure, corev1.ConditionFalse, before),
	}, extra...)
	return n
}

// sick is a node whose condition typ turned to status at at.
func sick(name string, typ corev1.NodeConditionType, status corev1.ConditionStatus, at time.Time) *corev1.Node {
	n := healthyNode(name)
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == typ {
			n.Status.Conditions[i] = nodeCond(typ, status, at)
			return n
		}
	}
	n.Status.Conditions = append(n.Status.Conditions, nodeCond(typ, status, at))
	return n
}

func nodeCond(typ corev1.NodeConditionType, status corev1.ConditionStatus, at time.Time) corev1.NodeCondition {
	return corev1.NodeCondition{Type: typ, Status: status, Reason: "Test" + string(typ), LastTransitionTime: metav1.NewTime(at)}
}

// podOpt shapes a test pod.
type podOpt func(*corev1.Pod)

// otherPod is a pod of another workload, created before the change and
// Ready since then, shaped by opts.
func otherPod(name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name, CreationTimestamp: metav1.NewTime(before)}}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(before)}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Ready: true}}
	for _, o := range opts {
		o(p)
	}
	return p
}

// notReadyAt turns the pod's Ready condition False at at.
func notReadyAt(at time.Time) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Conditions[0] = corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(at)}
	}
}

// restartedAt has the pod's container end at at and start again.
func restartedAt(at time.Time) podOpt {
	return func(p *corev1.Pod) {
		p.Status.ContainerStatuses[0].RestartCount++
		p.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.NewTime(at)}
	}
}

// failedAtTime has the pod fail at at.
func failedAtTime(at time.Time) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		notReadyAt(at)(p)
		p.Status.ContainerStatuses[0].State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.NewTime(at)}
	}
}

func createdAt(at time.Time) podOpt {
	return func(p *corev1.Pod) {
		p.CreationTimestamp = metav1.NewTime(at)
		p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(at)
	}
}

func succeeded(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded; notReadyAt(after)(p) }

func terminating(p *corev1.Pod) {
	deleted := metav1.NewTime(after)
	p.DeletionTimestamp = &deleted
	notReadyAt(after)(p)
}

// observed is a node the change reached at change, with its other pods.
func observed(n *corev1.Node, pods ...*corev1.Pod) NodeObservation {
	return NodeObservation{Node: n, Since: change, Pods: pods}
}

// readyPods are n Ready pods named prefix-i.
func readyPods(prefix string, n int) []*corev1.Pod {
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = otherPod(fmt.Sprintf("%s-%d", prefix, i))
	}
	return pods
}

// sickAndHealthy are sick nodes turned NotReady since the change, then
// healthy ones, without pods.
func sickAndHealthy(prefix string, sick, healthy int) []NodeObservation {
	var obs []NodeObservation
	for i := range sick + healthy {
		n := healthyNode(fmt.Sprintf("%s-%d", prefix, i))
		if i < sick {
			n.Status.Conditions[0] = nodeCond(corev1.NodeReady, corev1.ConditionFalse, after)
		}
		obs = append(obs, observed(n))
	}
	return obs
}

// notReadyPods are n pods named prefix-i turned not ready since the change.
func notReadyPods(prefix string, n int) []*corev1.Pod {
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = otherPod(fmt.Sprintf("%s-%d", prefix, i), notReadyAt(after))
	}
	return pods
}

func nodeHealthMetric(nh v1alpha1.NodeHealthMetric) v1alpha1.AnalysisMetric {
	return v1alpha1.AnalysisMetric{Name: "node-health", NodeHealth: &nh}
}

// baselineOf are n healthy baseline nodes, each with ten Ready pods.
func baselineOf(n int) []NodeObservation {
	obs := make([]NodeObservation, n)
	for i := range obs {
		name := fmt.Sprintf("stable-%d", i)
		obs[i] = observed(healthyNode(name), readyPods(name, 10)...)
	}
	return obs
}

func TestMeasureNodeHealth(t *testing.T) {
	tests := []struct {
		name   string
		metric v1alpha1.NodeHealthMetric
		in     NodeHealthInput
		// phase, value and baseline are the measurement's; message holds
		// substrings of its message, nodes the evidence's nodes in order.
		phase           v1alpha1.AnalysisPhase
		value, baseline string
		message         []string
		nodes           []string
	}{
		{
			name: "healthy nodes and pods pass",
			in: NodeHealthInput{
				Judged:   []NodeObservation{observed(healthyNode("canary-1"), readyPods("a", 4)...)},
				Baseline: baselineOf(2),
			},
			phase: v1alpha1.AnalysisSuccessful, value: "100", baseline: "100",
			message: []string{"0 of 1 node turned unhealthy", "readiness 100% (4 of 4) against 100% on the baseline (20 of 20)"},
		},
		{
			name: "a judged node NotReady since the change fails with its evidence",
			in: NodeHealthInput{
				Judged: []NodeObservation{
					observed(sick("canary-1", corev1.NodeReady, corev1.ConditionFalse, after), readyPods("a", 4)...),
					observed(healthyNode("canary-2"), readyPods("b", 4)...),
				},
				Baseline: baselineOf(2),
			},
			phase: v1alpha1.AnalysisFailed, value: "100", baseline: "100",
			message: []string{"regressed: 1 of 2 nodes turned unhealthy", "more than maxUnhealthyNodes 0", "canary-1: Ready=False (TestReady)"},
			nodes:   []string{"canary-1"},
		},
		{
			name: "a condition bad since before the change is not blamed",
			in: NodeHealthInput{
				Judged:   []NodeObservation{observed(sick("canary-1", corev1.NodeDiskPressure, corev1.ConditionTrue, before), readyPods("a", 4)...)},
				Baseline: baselineOf(2),
			},
			phase: v1alpha1.AnalysisSuccessful, value: "100", baseline: "100",
		},
		{
			name: "a condition turned bad exactly at the change is blamed",
			in: NodeHealthInput{
				Judged: []NodeObservation{observed(sick("canary-1", corev1.NodePIDPressure, corev1.ConditionTrue, change))},
			},
			phase: v1alpha1.AnalysisFailed, value: "1", baseline: "0",
			message: []string{"PIDPressure=True", "no other pod counted on the judged nodes: readiness not judged, value is the number of unhealthy nodes"},
			nodes:   []string{"canary-1"},
		},
		{
			name: "a zero transition time cannot tell and blames nothing",
			in: NodeHealthInput{
				Judged: []NodeObservation{observed(sick("canary-1", corev1.NodeReady, corev1.ConditionUnknown, time.Time{}),
					otherPod("p", notReadyAt(time.Time{})))},
			},
			phase: v1alpha1.AnalysisSuccessful, value: "0", baseline: "0",
		},
		{
			name:   "a user condition is judged, an unknown one is not",
			metric: v1alpha1.NodeHealthMetric{Conditions: []string{"KernelDeadlock"}},
			in: NodeHealthInput{
				Judged: []NodeObservation{
					observed(healthyNode("canary-1", nodeCond("KernelDeadlock", corev1.ConditionTrue, after))),
					observed(healthyNode("canary-2", nodeCond("FrequentDockerRestart", corev1.ConditionTrue, after))),
				},
			},
			phase: v1alpha1.AnalysisFailed, value: "1",
			message: []string{"1 of 2 nodes turned unhealthy", "canary-1: KernelDeadlock=True"},
			nodes:   []string{"canary-1"},
		},
		{
			name: "the baseline turning bad at the same rate explains the judged nodes",
			in: NodeHealthInput{
				Judged: []NodeObservation{observed(sick("canary-1", corev1.NodeNetworkUnavailable, corev1.ConditionTrue, after))},
				Baseline: []NodeObservation{
					observed(sick("stable-1", corev1.NodeNetworkUnavailable, corev1.ConditionTrue, after)),
				},
			},
			phase: v1alpha1.AnalysisSuccessful, value: "1", baseline: "1",
			message: []string{"against 1 expected from the baseline (1 of 1)"},
		},
		{
			name: "a baseline rate below the judged nodes' still regresses",
			in: NodeHealthInput{
				Judged: []NodeObservation{
					observed(sick("canary-1", corev1.NodeReady, corev1.ConditionFalse, after)),
					observed(healthyNode("canary-2")),
				},
				Baseline: append(baselineOf(3), observed(sick("stable-x", corev1.NodeReady, corev1.ConditionFalse, after))),
			},
			phase: v1alpha1.AnalysisFailed, value: "1", baseline: "0.5",
			message: []string{"1 of 2 nodes turned unhealthy since the change, against 0.5 expected from the baseline (1 of 4)"},
			nodes:   []string{"canary-1"},
		},
		{
			// 15/22 × 22 is 14.999999999999998 in floating point.
			name: "the same rate of nodes turned bad on both sides is explained exactly",
			in: NodeHealthInput{
				Judged:   sickAndHealthy("canary", 15, 7),
				Baseline: sickAndHealthy("stable", 15, 7),
			},
			phase: v1alpha1.AnalysisSuccessful, value: "15", baseline: "15",
			message: []string{"15 of 22 nodes turned unhealthy since the change, against 15 expected from the baseline (15 of 22)"},
		},
		{
			name:   "unhealthy nodes at maxUnhealthyNodes pass",
			metric: v1alpha1.NodeHealthMetric{MaxUnhealthyNodes: ptr[int32](2)},
			in: NodeHealthInput{Judged: []NodeObservation{
				observed(sick("canary-1", corev1.NodeReady, corev1.ConditionFalse, after)),
				observed(sick("canary-2", corev1.NodeReady, corev1.ConditionFalse, after)),
				observed(healthyNode("canary-3")),
			}},
			phase: v1alpha1.AnalysisSuccessful, value: "2",
		},
		{
			name:   "unhealthy nodes past maxUnhealthyNodes fail",
			metric: v1alpha1.NodeHealthMetric{MaxUnhealthyNodes: ptr[int32](1)},
			in: NodeHealthInput{Judged: []NodeObservation{
				observed(sick("canary-1", corev1.NodeReady, corev1.ConditionFalse, after)),
				observed(sick("canary-2", corev1.NodeReady, corev1.ConditionFalse, after)),
				observed(healthyNode("canary-3")),
			}},
			phase: v1alpha1.AnalysisFailed, value: "2",
			message: []string{"more than maxUnhealthyNodes 1"},
			nodes:   []string{"canary-1", "canary-2"},
		},
		{
			name: "other pods turned not ready since the change fail, named",
			in: NodeHealthInput{
				Judged: []NodeObservation{observed(healthyNode("canary-1"),
					otherPod("web-1", notReadyAt(after)), otherPod("web-2", notReadyAt(after)), otherPod("web-3"), otherPod("web-4"))},
				Baseline: baselineOf(1),
			},
			phase: v1alpha1.AnalysisFailed, value: "50", baseline: "100",
			message: []string{"other pods' readiness 50% (2 of 4) against 100% on the baseline (10 of 10), a drop of 50 points, more than maxPodReadinessDrop 10",
				"canary-1: 2 of 4 other pods not ready since the change: apps/web-1 not ready, apps/web-2 not ready"},
			nodes: []string{"canary-1"},
		},
		{
			name: "a pod not ready since before the change is not counted",
			in: NodeHealthInput{
				Judged: []NodeObservation{observed(healthyNode("canary-1"),
					otherPod("broken", notReadyAt(before), restartedAt(after)), otherPod("web-1"))},
				Baseline: baselineOf(1),
			},
			phase: v1alpha1.AnalysisSuccessful, value: "100", baseline: "100",
			message: []string{"(1 of 1)"},
		},
		{
			name: "a restart since the change counts as not ready, one before does not",
			in: NodeHealthInput{
				Judged: []NodeObservation{observed(healthyNode("canary-1"),
					otherPod("old-restart", restartedAt(before)), otherPod("new-restart", restartedAt(after)))},
			},
			phase: v1alpha1.AnalysisFailed, value: "50", baseline: "100",
			message: []string{"apps/new-restart restarted"},
			nodes:   []string{"canary-1"},
		},
		{
			name: "a pod failed since the change counts as not ready, one failed before is not counted",
			in: NodeHealthInput{
				Judged: []NodeObservation{observed(healthyNode("canary-1"),
					otherPod("old-failure", failedAtTime(before)), otherPod("new-failure", failedAtTime(after)), otherPod("ok"))},
			},
			phase: v1alpha1.AnalysisFailed, value: "50",
			message: []string{"1 of 2 other pods not ready since the change: apps/new-failure failed"},
			nodes:   []string{"canary-1"},
		},
		{
			name: "succeeded and terminating pods are not counted",
			in: NodeHealthInput{
				Judged: []NodeObservation{observed(healthyNode("canary-1"),
					otherPod("job", succeeded), otherPod("leaving", terminating), otherPod("ok"))},
			},
			phase: v1alpha1.AnalysisSuccessful, value: "100",
			message: []string{"(1 of 1)"},
		},
		{
			name: "a pod created after the change is not counted within its grace",
			in: NodeHealthInput{
				Judged: []NodeObservation{observed(healthyNode("canary-1"),
					otherPod("starting", createdAt(nhNow.Add(-NewPodGrace+time.Second)), notReadyAt(nhNow.Add(-NewPodGrace+time.Second))), otherPod("ok"))},
			},
			phase: v1alpha1.AnalysisSuccessful, value: "100",
			message: []string{"(1 of 1)"},
		},
		{
			name: "a pod created after the change and not ready past its grace counts as not ready",
			in: NodeHealthInput{
				Judged: []NodeObservation{observed(healthyNode("canary-1"),
					otherPod("stuck", createdAt(nhNow.Add(-NewPodGrace)), notReadyAt(nhNow.Add(-NewPodGrace))), otherPod("ok"))},
			},
			phase: v1alpha1.AnalysisFailed, value: "50",
			message: []string{"apps/stuck not ready"},
			nodes:   []string{"canary-1"},
		},
		{
			name: "a pod created after the change and ready past its grace counts as ready",
			in: NodeHealthInput{
				Judged: []NodeObservation{observed(healthyNode("canary-1"), otherPod("new", createdAt(after)))},
			},
			phase: v1alpha1.AnalysisSuccessful, value: "100",
		},
		{
			name:   "a readiness drop at maxPodReadinessDrop passes",
			metric: v1alpha1.NodeHealthMetric{MaxPodReadinessDrop: ptr[int32](25)},
			in: NodeHealthInput{
				Judged: []NodeObservation{observed(healthyNode("canary-1"),
					append(readyPods("ok", 3), otherPod("down", notReadyAt(after)))...)},
			},
			phase: v1alpha1.AnalysisSuccessful, value: "75", baseline: "100",
		},
		{
			name:   "a readiness drop past maxPodReadinessDrop fails",
			metric: v1alpha1.NodeHealthMetric{MaxPodReadinessDrop: ptr[int32](24)},
			in: NodeHealthInput{
				Judged: []NodeObservation{observed(healthyNode("canary-1"),
					append(readyPods("ok", 3), otherPod("down", notReadyAt(after)))...)},
			},
			phase: v1alpha1.AnalysisFailed, value: "75", baseline: "100",
			message: []string{"a drop of 25 points, more than maxPodReadinessDrop 24"},
			nodes:   []string{"canary-1"},
		},
		{
			// 100 × 2/3 − 100 × 5/12 is 25.000000000000007 in floating point.
			name:   "a drop of exactly maxPodReadinessDrop between uneven fractions passes",
			metric: v1alpha1.NodeHealthMetric{MaxPodReadinessDrop: ptr[int32](25)},
			in: NodeHealthInput{
				Judged:   []NodeObservation{observed(healthyNode("canary-1"), append(readyPods("ok", 5), notReadyPods("down", 7)...)...)},
				Baseline: []NodeObservation{observed(healthyNode("stable-1"), append(readyPods("s", 2), notReadyPods("s-down", 1)...)...)},
			},
			phase:   v1alpha1.AnalysisSuccessful,
			message: []string{"(5 of 12) against 66.6667% on the baseline (2 of 3)"},
		},
		{
			name: "the baseline's own readiness drop is allowed for",
			in: NodeHealthInput{
				Judged: []NodeObservation{observed(healthyNode("canary-1"),
					append(readyPods("ok", 3), otherPod("down", notReadyAt(after)))...)},
				Baseline: []NodeObservation{observed(healthyNode("stable-1"),
					append(readyPods("s", 4), otherPod("s-down", notReadyAt(after)))...)},
			},
			phase: v1alpha1.AnalysisSuccessful, value: "75", baseline: "80",
		},
		{
			name: "a restarted init container counts as a restart",
			in: NodeHealthInput{
				Judged: []NodeObservation{observed(healthyNode("canary-1"), otherPod("sidecar", func(p *corev1.Pod) {
					p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "proxy", LastTerminationState: corev1.ContainerState{
						Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, FinishedAt: metav1.NewTime(after)}}}}
				}), otherPod("ok"))},
			},
			phase: v1alpha1.AnalysisFailed, value: "50",
			message: []string{"apps/sidecar restarted"},
			nodes:   []string{"canary-1"},
		},
		{
			name: "a pod without a Ready condition from before the change is not counted",
			in: NodeHealthInput{
				Judged: []NodeObservation{observed(healthyNode("canary-1"),
					otherPod("pending", func(p *corev1.Pod) { p.Status.Phase, p.Status.Conditions = corev1.PodPending, nil }), otherPod("ok"))},
			},
			phase: v1alpha1.AnalysisSuccessful, value: "100",
			message: []string{"(1 of 1)"},
		},
		{
			name: "a pod created after the change that failed past its grace counts as failed",
			in: NodeHealthInput{
				Judged: []NodeObservation{observed(healthyNode("canary-1"),
					otherPod("job-x", createdAt(after), failedAtTime(after.Add(time.Second))), otherPod("ok"))},
			},
			phase: v1alpha1.AnalysisFailed, value: "50",
			message: []string{"apps/job-x failed"},
			nodes:   []string{"canary-1"},
		},
		{
			name: "a failed pod whose failure time is unknown is not counted",
			in: NodeHealthInput{
				Judged: []NodeObservation{observed(healthyNode("canary-1"), otherPod("x", failedAtTime(time.Time{})), otherPod("ok"))},
			},
			phase: v1alpha1.AnalysisSuccessful, value: "100",
			message: []string{"(1 of 1)"},
		},
		{
			name: "baseline nodes without a change time are left out",
			in: NodeHealthInput{
				Judged: []NodeObservation{observed(healthyNode("canary-1"), otherPod("ok"))},
				Baseline: []NodeObservation{
					{Node: sick("stable-1", corev1.NodeReady, corev1.ConditionFalse, after), Pods: []*corev1.Pod{otherPod("s", notReadyAt(after))}},
				},
			},
			phase: v1alpha1.AnalysisSuccessful, value: "100", baseline: "100",
			message: []string{"(0 of 0)"},
		},
		{
			name:    "no judged node is inconclusive",
			in:      NodeHealthInput{Baseline: baselineOf(3)},
			phase:   v1alpha1.AnalysisInconclusive,
			message: []string{"no node to judge"},
		},
		{
			name: "judged nodes without their object or change time are inconclusive",
			in: NodeHealthInput{
				Judged: []NodeObservation{
					{Since: change, Pods: readyPods("a", 2)},
					{Node: sick("canary-2", corev1.NodeReady, corev1.ConditionFalse, after)},
				},
			},
			phase:   v1alpha1.AnalysisInconclusive,
			message: []string{"no node to judge"},
		},
		{
			name: "an empty baseline expects healthy nodes and ready pods",
			in: NodeHealthInput{
				Judged: []NodeObservation{observed(healthyNode("canary-1"), readyPods("a", 9)...)},
			},
			phase: v1alpha1.AnalysisSuccessful, value: "100", baseline: "100",
			message: []string{"against 0 expected from the baseline (0 of 0)"},
		},
		{
			name: "evidence is worst first, then by name, and at most five nodes",
			in: NodeHealthInput{Judged: []NodeObservation{
				observed(healthyNode("n-a"), otherPod("a1", notReadyAt(after))),
				observed(healthyNode("n-b"), otherPod("b1", notReadyAt(after)), otherPod("b2", notReadyAt(after))),
				observed(sick("n-c", corev1.NodeReady, corev1.ConditionFalse, after), otherPod("c1", notReadyAt(after))),
				observed(healthyNode("n-d"), otherPod("d1", notReadyAt(after))),
				observed(healthyNode("n-e"), otherPod("e1", notReadyAt(after))),
				observed(healthyNode("n-f"), otherPod("f1", notReadyAt(after))),
				observed(healthyNode("n-g"), otherPod("g1")),
			}},
			phase: v1alpha1.AnalysisFailed, value: "12.5",
			message: []string{"; and 1 more node"},
			nodes:   []string{"n-c", "n-b", "n-a", "n-d", "n-e"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MeasureNodeHealth(nodeHealthMetric(tt.metric), tt.in, nhNow)
			if got.Phase != tt.phase {
				t.Fatalf("phase = %s, want %s: %s", got.Phase, tt.phase, got.Message)
			}
			if tt.value != "" && got.Value != tt.value {
				t.Errorf("value = %q, want %q: %s", got.Value, tt.value, got.Message)
			}
			if tt.baseline != "" && got.BaselineValue != tt.baseline {
				t.Errorf("baseline value = %q, want %q: %s", got.BaselineValue, tt.baseline, got.Message)
			}
			for _, want := range tt.message {
				if !strings.Contains(got.Message, want) {
					t.Errorf("message %q lacks %q", got.Message, want)
				}
			}
			var nodes []string
			for _, e := range got.Nodes {
				nodes = append(nodes, e.Node)
				if e.Message == "" {
					t.Errorf("evidence of %s has no message", e.Node)
				}
			}
			if strings.Join(nodes, ",") != strings.Join(tt.nodes, ",") {
				t.Errorf("evidence nodes = %v, want %v", nodes, tt.nodes)
			}
			if !got.Time.Equal(&metav1.Time{Time: nhNow}) {
				t.Errorf("time = %v, want %v", got.Time, nhNow)
			}
			if !strings.HasPrefix(got.Query, "node health of ") {
				t.Errorf("query = %q, want a description", got.Query)
			}
		})
	}
}

// Nothing is kept between measurements: a judged node that vanished (gone,
// put in maintenance) is simply no longer judged, and one that comes back
// is judged against its own change time again.
func TestNodeHealthKeepsNoState(t *testing.T) {
	m := nodeHealthMetric(v1alpha1.NodeHealthMetric{})
	broken := observed(sick("canary-2", corev1.NodeReady, corev1.ConditionFalse, after))
	healthy := observed(healthyNode("canary-1"), readyPods("a", 3)...)
	rounds := []struct {
		judged []NodeObservation
		phase  v1alpha1.AnalysisPhase
		nodes  int
	}{
		{[]NodeObservation{healthy, broken}, v1alpha1.AnalysisFailed, 2},
		{[]NodeObservation{healthy}, v1alpha1.AnalysisSuccessful, 1},
		{nil, v1alpha1.AnalysisInconclusive, 0},
		{[]NodeObservation{broken, healthy}, v1alpha1.AnalysisFailed, 2},
	}
	for i, r := range rounds {
		got := MeasureNodeHealth(m, NodeHealthInput{Judged: r.judged, Baseline: baselineOf(1)}, nhNow.Add(time.Duration(i)*time.Minute))
		if got.Phase != r.phase || !strings.HasPrefix(got.Query, fmt.Sprintf("node health of %s ", plural(r.nodes, "node"))) {
			t.Errorf("round %d: %s (%s), want %s over %d nodes: %s", i, got.Phase, got.Query, r.phase, r.nodes, got.Message)
		}
	}
}

// A node with many pods not ready names a few of them in the message and
// more in its evidence, each saying how many it left out.
func TestNodeHealthNamesAFewPodsPerNode(t *testing.T) {
	var pods []*corev1.Pod
	for i := range 15 {
		pods = append(pods, otherPod(fmt.Sprintf("web-%02d", i), notReadyAt(after)))
	}
	got := MeasureNodeHealth(nodeHealthMetric(v1alpha1.NodeHealthMetric{}),
		NodeHealthInput{Judged: []NodeObservation{observed(healthyNode("canary-1"), pods...)}}, nhNow)
	if want := "15 of 15 other pods not ready since the change: apps/web-00 not ready, apps/web-01 not ready, apps/web-02 not ready and 12 more"; !strings.HasSuffix(got.Message, want) {
		t.Errorf("message %q does not end with %q", got.Message, want)
	}
	if len(got.Nodes) != 1 || strings.Count(got.Nodes[0].Message, " not ready,") != maxEvidencePodsNamed-1 ||
		!strings.HasSuffix(got.Nodes[0].Message, "apps/web-09 not ready and 5 more") {
		t.Errorf("evidence %+v", got.Nodes)
	}
}
