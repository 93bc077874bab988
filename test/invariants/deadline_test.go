package invariants

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// deadlineFleet is a fleet whose ExtendedDaemonSet allows 10s without
// progress, with a slack of 5s.
func deadlineFleet(t *testing.T) *fleet {
	f := newFleet(t, 4, intstr.FromInt32(1), intstr.FromInt32(0))
	f.c.DeadlineSlack = 5 * time.Second
	f.eds.Spec.ProgressDeadlineSeconds = ptr.To(int32(10))
	f.writeStatus(func(*v1alpha1.ExtendedDaemonSetStatus) {})
	return f
}

// rollingFleet is a deadlineFleet whose template changed, its rollout
// under way.
func rollingFleet(t *testing.T) *fleet {
	f := deadlineFleet(t)
	f.change()
	f.rolling()
	return f
}

// change applies a new template: a new generation.
func (f *fleet) change() {
	f.eds.Generation++
	f.c.ExtendedDaemonSet(f.eds.DeepCopy(), false, f.step())
}

// phase writes the status of the current generation: Ready, Stalled for
// reason, or Reconciling for reason.
func (f *fleet) phase(ready bool, stalled, reconciling string) {
	f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) {
		st.ObservedGeneration = f.eds.Generation
		readiness := metav1.ConditionFalse
		if ready {
			readiness = metav1.ConditionTrue
		}
		st.Conditions = []metav1.Condition{{Type: v1alpha1.ReadyCondition, Status: readiness, Reason: "Test"}}
		if stalled != "" {
			st.Conditions = append(st.Conditions, metav1.Condition{Type: v1alpha1.StalledCondition, Status: metav1.ConditionTrue, Reason: stalled})
		}
		if reconciling != "" {
			st.Conditions = append(st.Conditions, metav1.Condition{Type: v1alpha1.ReconcilingCondition, Status: metav1.ConditionTrue, Reason: reconciling})
		}
	})
}

// rolling writes the status of a rollout under way.
func (f *fleet) rolling() { f.phase(false, "", v1alpha1.ReasonRollingUpdate) }

func TestChangeThatNeverEndsIsCaught(t *testing.T) {
	g := gomega.NewWithT(t)
	f := rollingFleet(t)
	f.wait(12 * time.Second)
	g.Expect(f.c.Violations()).To(gomega.BeEmpty(), "within 10s + 5s")
	g.Expect(f.c.Unsettled(f.now)).To(gomega.HaveLen(1))
	f.wait(3 * time.Second)
	g.Expect(rules(f.c.Violations())).To(gomega.Equal([]Rule{Hanging}))
	g.Expect(f.c.Violations()[0].Message).To(gomega.And(
		gomega.ContainSubstring("eds agent: generation 2"),
		gomega.ContainSubstring("allowed progressDeadlineSeconds 10s + slack 5s"),
		gomega.ContainSubstring("Reconciling=True RollingUpdate")))
	f.wait(20 * time.Second)
	g.Expect(f.c.Violations()).To(gomega.HaveLen(1), "told once")
}

func TestChangesEndingReadyStalledOrWaitingForAPersonPass(t *testing.T) {
	for name, end := range map[string]func(*fleet){
		"ready":   func(f *fleet) { f.phase(true, "", "") },
		"stalled": func(f *fleet) { f.phase(false, v1alpha1.ReasonProgressDeadlineExceeded, "") },
		"paused":  func(f *fleet) { f.phase(false, "", v1alpha1.ReasonCanaryPaused) },
		"frozen":  func(f *fleet) { f.phase(false, "", v1alpha1.ReasonRolloutFrozen) },
	} {
		t.Run(name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			f := rollingFleet(t)
			f.wait(8 * time.Second)
			end(f)
			f.rolling()
			f.wait(30 * time.Second)
			g.Expect(f.c.Violations()).To(gomega.BeEmpty())
			g.Expect(f.c.Unsettled(f.now)).To(gomega.BeEmpty())
		})
	}
}

// A status of the generation before says nothing of the new one.
func TestStatusOfAnEarlierGenerationIsNoEnd(t *testing.T) {
	g := gomega.NewWithT(t)
	f := deadlineFleet(t)
	f.phase(true, "", "")
	f.change()
	f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) { st.Desired = 4 })
	f.wait(15 * time.Second)
	g.Expect(rules(f.c.Violations())).To(gomega.Equal([]Rule{Hanging}))
}

// A node gaining an available pod of a replica set is progress: the
// deadline counts from the last one.
func TestProgressPushesTheDeadline(t *testing.T) {
	g := gomega.NewWithT(t)
	f := rollingFleet(t)
	for _, node := range []string{"node-0", "node-1", "node-2", "node-3"} {
		f.wait(8 * time.Second)
		f.remove(node)
		f.create(node, "v2", true)
	}
	g.Expect(f.c.Violations()).To(gomega.BeEmpty(), "a node every 10s")
	f.wait(15 * time.Second)
	g.Expect(rules(f.c.Violations())).To(gomega.Equal([]Rule{Hanging}))
}

// A pod that turns ready and fails again and again is no progress.
func TestFlappingPodsDoNotHoldTheDeadlineOff(t *testing.T) {
	g := gomega.NewWithT(t)
	f := rollingFleet(t)
	f.remove("node-0")
	pod := f.create("node-0", "v2", true)
	for range 5 {
		f.wait(2 * time.Second)
		f.showReady(pod, false)
		f.showReady(pod, true)
	}
	g.Expect(rules(f.c.Violations())).To(gomega.Equal([]Rule{Hanging}))
}

// A node that changes (here, goes NotReady) may change what the rollout
// must do: the deadline counts from it.
func TestNodeChangesPushTheDeadline(t *testing.T) {
	g := gomega.NewWithT(t)
	f := rollingFleet(t)
	f.wait(10 * time.Second)
	f.stopKubelet("node-3")
	f.wait(10 * time.Second)
	g.Expect(f.c.Violations()).To(gomega.BeEmpty())
	f.wait(5 * time.Second)
	g.Expect(rules(f.c.Violations())).To(gomega.Equal([]Rule{Hanging}))
}

// A steering value is a change the rollout must answer too; one with
// nothing to act on leaves the status as it was, which is an end when it
// was one.
func TestSteeringValuesAreChanges(t *testing.T) {
	g := gomega.NewWithT(t)
	f := deadlineFleet(t)
	f.change()
	f.phase(false, v1alpha1.ReasonCanaryFailed, "")
	f.annotate(v1alpha1.CanaryValidatedAnnotation, "made-up")
	f.wait(20 * time.Second)
	g.Expect(f.c.Violations()).To(gomega.BeEmpty(), "nothing to act on")
	f.annotate(v1alpha1.CanaryRetryAnnotation, "1")
	f.phase(false, "", v1alpha1.ReasonCanaryRunning)
	f.wait(15 * time.Second)
	g.Expect(rules(f.c.Violations())).To(gomega.Equal([]Rule{Hanging}))
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring(`extendeddaemonset.io/canary-retry="1"`))
}

// A canary runs its duration with nothing moving: the deadline allows it.
func TestTheCanaryDurationIsAllowed(t *testing.T) {
	g := gomega.NewWithT(t)
	f := deadlineFleet(t)
	f.eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{Duration: &metav1.Duration{Duration: 20 * time.Second}}
	f.change()
	f.phase(false, "", v1alpha1.ReasonCanaryRunning)
	f.wait(32 * time.Second)
	g.Expect(f.c.Violations()).To(gomega.BeEmpty())
	f.wait(3 * time.Second)
	g.Expect(rules(f.c.Violations())).To(gomega.Equal([]Rule{Hanging}))
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring("progressDeadlineSeconds 10s + canary 20s + slack 5s"))
}
