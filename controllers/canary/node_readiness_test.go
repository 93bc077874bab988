package canary

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// startedOn binds a canary pod to node, started by its kubelet at at.
func startedOn(node string, at time.Time) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.NodeName = node
		p.Status.StartTime = &metav1.Time{Time: at}
	}
}

// notReadySince marks candidate name as not Ready since at (zero: since
// no known time).
func notReadySince(in *Input, name string, at time.Time) {
	for i := range in.Candidates {
		if in.Candidates[i].Name == name {
			in.Candidates[i].NotReady, in.Candidates[i].NotReadySince = true, at
			in.Candidates[i].Unhealthy = "the node is not Ready"
		}
	}
}

// deadNodeInput is the scenario: a canary of one node, node-01,
// whose pod started 1 s in and whose kubelet stopped 5 s in; observed past
// its duration with every counter saying the canary is complete.
func deadNodeInput(autoPause, autoFail bool) Input {
	strategy := &v1alpha1.CanaryStrategy{
		Duration:  dur(10 * time.Minute),
		AutoPause: &v1alpha1.CanaryAutoPause{Enabled: ptr.To(autoPause)},
		AutoFail:  &v1alpha1.CanaryAutoFail{Enabled: ptr.To(autoFail)},
	}
	in := stepInput(11*time.Minute, strategy)
	in.Pods = []*corev1.Pod{canaryPod("rs-2-x", startedOn("node-01", start.Add(time.Second)))}
	notReadySince(&in, "node-01", start.Add(5*time.Second))
	return in
}

// A canary node that went NotReady after the canary pod started there may
// have been broken by the canary: it fails or pauses the canary as
// configured, and is never promoted on.
func TestStepACanaryNodeThatWentNotReadyFailsOrPausesTheCanary(t *testing.T) {
	g := gomega.NewWithT(t)
	res := expectOutcome(g, deadNodeInput(true, true), outcome{failed: true, reason: v1alpha1.ReasonCanaryNodeNotReady, transition: Failed})
	g.Expect(res.Status.Message).To(gomega.ContainSubstring("node-01"))

	res = expectOutcome(g, deadNodeInput(true, false), outcome{paused: true, reason: v1alpha1.ReasonCanaryNodeNotReady, transition: Paused})
	g.Expect(res.Status.Message).To(gomega.ContainSubstring("node-01"))
	g.Expect(res.Status.Nodes).To(gomega.Equal([]string{"node-01"}), "a paused canary keeps its node for a person to look at")

	// Unpaused by a person: the node is replaced and judged anew.
	in := deadNodeInput(true, false)
	in.Annotations = map[string]string{v1alpha1.CanaryUnpausedAnnotation: "rs-2"}
	res = expectOutcome(g, in, outcome{})
	g.Expect(res.Status.Nodes).To(gomega.Equal([]string{"node-00"}))
}

// Without autoPause or autoFail, the dead node is replaced and the
// canary's duration runs again for its replacement.
func TestStepReplacesADeadCanaryNodeAndRunsTheDurationAgain(t *testing.T) {
	g := gomega.NewWithT(t)
	in := deadNodeInput(false, false)
	res := expectOutcome(g, in, outcome{})
	g.Expect(res.Status.Nodes).To(gomega.Equal([]string{"node-00"}))
	g.Expect(res.RequeueAfter).To(gomega.Equal(10*time.Minute), "the replacement runs the whole duration")

	// The next pass, its pod not yet available: still no promotion.
	in.Status, in.Ready = res.Status, false
	in.Now = in.Now.Add(10 * time.Minute)
	expectOutcome(g, in, outcome{reason: "WaitingForPods"})
	in.Ready = true
	expectOutcome(g, in, outcome{promote: true, transition: Promoted})
}

// A node that was NotReady before the canary pod ran there did not break
// because of the canary: it is replaced, whatever autoFail says.
func TestStepReplacesANodeThatWasNotReadyBeforeTheCanaryRan(t *testing.T) {
	for name, mutate := range map[string]func(*Input){
		"NotReady before the pod started": func(in *Input) {
			in.Pods = []*corev1.Pod{canaryPod("rs-2-x", startedOn("node-01", start.Add(10*time.Second)))}
		},
		"the pod never started":        func(in *Input) { in.Pods[0].Status.StartTime = nil },
		"NotReady since no known time": func(in *Input) { notReadySince(in, "node-01", time.Time{}) },
	} {
		t.Run(name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			in := deadNodeInput(true, true)
			mutate(&in)
			res := expectOutcome(g, in, outcome{})
			g.Expect(res.Status.Nodes).To(gomega.Equal([]string{"node-00"}))
		})
	}
}

// A canary never promotes on fewer judged nodes than it asked for.
func TestStepNeverPromotesOnFewerNodesThanWanted(t *testing.T) {
	g := gomega.NewWithT(t)
	in := stepInput(11*time.Minute, &v1alpha1.CanaryStrategy{Duration: dur(10 * time.Minute), Replicas: ptr.To(intstr.FromInt32(2))})
	in.Candidates[0].Unhealthy, in.Candidates[2].Unhealthy = "the node is cordoned", "the node is cordoned"
	res := expectOutcome(g, in, outcome{reason: ReasonWaitingForNodes})
	g.Expect(res.Status.Nodes).To(gomega.Equal([]string{"node-01"}))
	g.Expect(res.Status.Message).To(gomega.ContainSubstring("1 of 2"))
}

// Nodes found after a wait run the whole duration; nodes let go because
// the cluster shrank were judged all along and restart nothing.
func TestStepRunsTheDurationForNodesFoundLateOnly(t *testing.T) {
	g := gomega.NewWithT(t)
	in := stepInput(11*time.Minute, &v1alpha1.CanaryStrategy{Duration: dur(10 * time.Minute)})
	in.Status.Nodes, in.Ready = nil, false
	res := expectOutcome(g, in, outcome{})
	g.Expect(res.Status.Nodes).To(gomega.Equal([]string{"node-00"}))
	g.Expect(res.RequeueAfter).To(gomega.Equal(10*time.Minute), "the first node found runs the whole duration")

	in = stepInput(11*time.Minute, &v1alpha1.CanaryStrategy{Duration: dur(10 * time.Minute), Replicas: ptr.To(intstr.FromString("50%"))})
	in.Status.Nodes, in.Desired = []string{"node-00", "node-01"}, 2
	in.Candidates = in.Candidates[:2]
	res = expectOutcome(g, in, outcome{promote: true, transition: Promoted})
	g.Expect(res.Status.Nodes).To(gomega.Equal([]string{"node-00"}), "one of two nodes is 50%")
}

// A canary paused for a node that went NotReady stays paused when the node
// comes back: what broke it may break it again, and a person decides.
func TestStepPauseForANotReadyNodeWaitsForAPerson(t *testing.T) {
	g := gomega.NewWithT(t)
	in := deadNodeInput(true, false)
	res := expectOutcome(g, in, outcome{paused: true, reason: v1alpha1.ReasonCanaryNodeNotReady, transition: Paused})

	in.Status = res.Status
	in.Candidates = zoned(3, "a") // node-01 Ready again
	res = expectOutcome(g, in, outcome{paused: true, reason: v1alpha1.ReasonCanaryNodeNotReady})
	g.Expect(res.Status.Message).To(gomega.ContainSubstring("node-01"))

	in.Annotations = map[string]string{v1alpha1.CanaryUnpausedAnnotation: "rs-2"}
	res = expectOutcome(g, in, outcome{promote: true, transition: Promoted})
}

// inMaintenance puts candidate name in maintenance for why.
func inMaintenance(in *Input, name, why string) {
	for i := range in.Candidates {
		if in.Candidates[i].Name == name {
			in.Candidates[i].Maintenance = why
			in.Candidates[i].Unhealthy = "the node is in maintenance: " + why
		}
	}
}

// A recorded canary node that enters maintenance is neither kept nor
// judged: it is replaced by a new pick, as a vanished node is, whatever
// autoFail and autoPause say, and even when it also went NotReady after
// the canary started there (a drain, not the canary, took it down).
func TestStepReplacesACanaryNodeInMaintenance(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate func(*Input)
		nodes  []string
	}{
		"draining": {func(in *Input) { inMaintenance(in, "node-01", "DrainInProgress") }, []string{"node-00"}},
		"cordoned and NotReady after the canary started": {func(in *Input) {
			in.Pods = []*corev1.Pod{canaryPod("rs-2-x", startedOn("node-01", start.Add(time.Second)))}
			notReadySince(in, "node-01", start.Add(5*time.Second))
			inMaintenance(in, "node-01", "cordoned")
		}, []string{"node-00"}},
		"two canary nodes, one taken by Karpenter": {func(in *Input) {
			in.Strategy.Replicas = ptr.To(intstr.FromInt32(2))
			in.Status.Nodes = []string{"node-00", "node-01"}
			inMaintenance(in, "node-00", "taint karpenter.sh/disrupted")
		}, []string{"node-01", "node-02"}},
		"every other node in maintenance: the canary waits": {func(in *Input) {
			for _, n := range []string{"node-00", "node-01", "node-02"} {
				inMaintenance(in, n, "cordoned")
			}
		}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			in := stepInput(11*time.Minute, &v1alpha1.CanaryStrategy{
				Duration:  dur(10 * time.Minute),
				AutoPause: &v1alpha1.CanaryAutoPause{Enabled: ptr.To(true)},
				AutoFail:  &v1alpha1.CanaryAutoFail{Enabled: ptr.To(true)},
			})
			tc.mutate(&in)
			want := outcome{}
			if tc.nodes == nil {
				want = outcome{reason: ReasonWaitingForNodes}
			}
			res := expectOutcome(g, in, want)
			g.Expect(res.Status.Nodes).To(gomega.Equal(tc.nodes))
			g.Expect(res.Promote).To(gomega.BeFalse(), "a replaced node is judged anew, never promoted on")
		})
	}
}
