package invariants

import (
	"fmt"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// annotate sets an annotation of the ExtendedDaemonSet, as a person does,
// and shows it to the checker.
func (f *fleet) annotate(key, value string) {
	if f.eds.Annotations == nil {
		f.eds.Annotations = map[string]string{}
	}
	f.eds.Annotations[key] = value
	f.c.ExtendedDaemonSet(f.eds.DeepCopy(), false, f.step())
}

// wait lets d pass, a second at a time.
func (f *fleet) wait(d time.Duration) {
	for range int(d / time.Second) {
		f.step()
	}
}

// startCanary records a new instance of canary replicaSet on node-0,
// started now, its analysis not measured yet, and runs its pod there.
func (f *fleet) startCanary(replicaSet string) {
	f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) {
		st.Canary = &v1alpha1.CanaryStatus{ReplicaSet: replicaSet, Nodes: []string{"node-0"}, StartedAt: ptr.To(metav1.NewTime(f.now.Add(time.Second)))}
	})
	f.remove("node-0")
	f.create("node-0", replicaSet, true)
}

func (f *fleet) analysisPasses() {
	f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) {
		st.Canary.Analysis = &v1alpha1.AnalysisStatus{Phase: v1alpha1.AnalysisSuccessful}
	})
}

func promote(st *v1alpha1.ExtendedDaemonSetStatus) {
	st.ActiveReplicaSet, st.Canary = st.Canary.ReplicaSet, nil
}

// canaryFleet is a fleet running canary v2 of 10s since the current step.
func canaryFleet(t *testing.T, analysis bool) *fleet {
	f := newFleet(t, 4, intstr.FromInt32(1), intstr.FromInt32(0))
	f.eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{Duration: &metav1.Duration{Duration: 10 * time.Second}}
	if analysis {
		f.eds.Spec.Strategy.Canary.Analysis = &v1alpha1.CanaryAnalysis{}
	}
	f.startCanary("v2")
	return f
}

func TestPromotionBeforeTheDurationIsCaught(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, false)
	f.writeStatus(promote)
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{EarlyPromotion}))
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring("its duration is 10s"))
}

func TestPromotionAfterTheDurationPasses(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, false)
	f.wait(10 * time.Second)
	f.writeStatus(promote)
	g.Expect(f.settle()).To(gomega.BeEmpty())
}

func TestPromotionWithoutASuccessfulAnalysisIsCaught(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, true)
	f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) {
		st.Canary.Analysis = &v1alpha1.AnalysisStatus{Phase: v1alpha1.AnalysisRunning}
	})
	f.wait(10 * time.Second)
	f.writeStatus(promote)
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{EarlyPromotion}))
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring("with its analysis Running"))
}

func TestPromotionAfterASuccessfulAnalysisPasses(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, true)
	f.wait(10 * time.Second)
	f.analysisPasses()
	f.writeStatus(promote)
	g.Expect(f.settle()).To(gomega.BeEmpty())
}

func TestValidatedCanaryMayBePromotedAtOnce(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, true)
	f.annotate(v1alpha1.CanaryValidatedAnnotation, "v2")
	f.writeStatus(promote)
	g.Expect(f.settle()).To(gomega.BeEmpty())
}

// kubectl eds names the instance it validates after the replica set.
func TestValidationNamingTheInstanceMayPromoteAtOnce(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, true)
	f.annotate(v1alpha1.CanaryValidatedAnnotation, "v2@k3x9")
	f.writeStatus(promote)
	g.Expect(f.settle()).To(gomega.BeEmpty())
}

func TestValidatedThroughTheSpecTwinMayBePromotedAtOnce(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, true)
	f.eds.Spec.Strategy.Canary.Validate = "v2"
	f.eds.Generation++
	f.writeStatus(promote)
	g.Expect(f.settle()).To(gomega.BeEmpty())
}

// The template of a validated canary applied again starts another canary
// of the same replica set: the validation left from the first does not
// promote it (`kubectl eds canary validate`, rollback, apply again).
func TestLeftoverValidationOfAnEarlierInstanceIsCaught(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, false)
	f.annotate(v1alpha1.CanaryValidatedAnnotation, "v2")
	f.writeStatus(promote)
	f.startCanary("v3")
	f.wait(10 * time.Second)
	f.writeStatus(promote)
	g.Expect(f.settle()).To(gomega.BeEmpty(), "v2 validated, v3 ran its duration")
	f.startCanary("v2")
	f.writeStatus(promote)
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{EarlyPromotion}))
	g.Expect(f.c.Violations()[0].Message).To(gomega.MatchRegexp(`canary v2 promoted after \ds, its duration is 10s, and no validation was given since it started`))
}

func TestLeftoverValidationSpecTwinOfAnEarlierInstanceIsCaught(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, false)
	f.eds.Spec.Strategy.Canary.Validate = "v2"
	f.eds.Generation++
	f.writeStatus(promote)
	f.startCanary("v3")
	f.wait(10 * time.Second)
	f.writeStatus(promote)
	f.startCanary("v2")
	f.writeStatus(promote)
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{EarlyPromotion}))
}

// A retried canary is a new instance: its duration counts from its new
// start, not from the first one's.
func TestRetriedCanaryRunsItsDurationAgain(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, false)
	f.wait(8 * time.Second)
	f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) { st.Canary.Failed = true })
	f.annotate(v1alpha1.CanaryRetryAnnotation, "1")
	f.startCanary("v2")
	f.wait(4 * time.Second)
	f.writeStatus(promote)
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{EarlyPromotion}))
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring("its duration is 10s"))
}

// An analysis a new instance shows passed from its first status was not
// measured on it: it comes from an earlier one.
func TestAnalysisCarriedOverFromAnEarlierInstanceIsCaught(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, true)
	f.wait(10 * time.Second)
	f.analysisPasses()
	f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) { st.Canary.Failed = true })
	f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) {
		st.Canary = &v1alpha1.CanaryStatus{ReplicaSet: "v2", Nodes: []string{"node-0"}, StartedAt: ptr.To(metav1.NewTime(f.now.Add(time.Second))),
			Analysis: &v1alpha1.AnalysisStatus{Phase: v1alpha1.AnalysisSuccessful}}
	})
	f.wait(10 * time.Second)
	f.writeStatus(promote)
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{EarlyPromotion}))
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring("not seen pass since it started"))
}

func TestFailedCanaryPromotedIsCaught(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, false)
	f.wait(10 * time.Second)
	f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) { st.Canary.Failed = true })
	f.writeStatus(promote)
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{EarlyPromotion}))
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring("promoted though it failed"))
}

func TestPromotionWithNoCanaryOfItRunningIsCaught(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, false)
	f.wait(10 * time.Second)
	f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) { st.ActiveReplicaSet, st.Canary = "v3", nil })
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{EarlyPromotion}))
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring("v3 promoted with no canary of it running (running: v2)"))
}

// stepsFleet is a canary v2 of three 10s steps with an analysis, on
// node-0, at step 1 since now.
func stepsFleet(t *testing.T) *fleet {
	f := newFleet(t, 4, intstr.FromInt32(1), intstr.FromInt32(0))
	step := func(d time.Duration) v1alpha1.CanaryStep {
		return v1alpha1.CanaryStep{Replicas: intstr.FromInt32(1), Duration: &metav1.Duration{Duration: d}}
	}
	f.eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{Steps: []v1alpha1.CanaryStep{step(10 * time.Second), step(10 * time.Second), step(10 * time.Second)},
		Analysis: &v1alpha1.CanaryAnalysis{}}
	// Its pod first, so that its steps' clocks start with the story.
	f.remove("node-0")
	f.create("node-0", "v2", true)
	f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) {
		start := metav1.NewTime(f.now.Add(time.Second))
		st.Canary = &v1alpha1.CanaryStatus{ReplicaSet: "v2", Nodes: []string{"node-0"}, StartedAt: &start, Step: 1, StepStartedAt: &start,
			Steps: []v1alpha1.CanaryStepStatus{{Step: 1, StartedAt: start, Result: v1alpha1.CanaryStepRunning}}}
	})
	return f
}

// nextStep ends the current step with result, its analysis ending as
// analysis, and starts the next one, as the controller records them.
func (f *fleet) nextStep(result v1alpha1.CanaryStepResult, analysis v1alpha1.AnalysisPhase) {
	f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) {
		c := st.Canary
		now := metav1.NewTime(f.now.Add(time.Second))
		rec := &c.Steps[len(c.Steps)-1]
		rec.Result, rec.FinishedAt, rec.Analysis = result, &now, analysis
		c.Step++
		c.StepStartedAt, c.Analysis = &now, nil
		c.Steps = append(c.Steps, v1alpha1.CanaryStepStatus{Step: c.Step, StartedAt: now, Result: v1alpha1.CanaryStepRunning})
	})
}

// passStep lets the current step run its 10s and pass its analysis, then
// goes on.
func (f *fleet) passStep() {
	f.wait(10 * time.Second)
	f.analysisPasses()
	f.nextStep(v1alpha1.CanaryStepSuccessful, v1alpha1.AnalysisSuccessful)
}

func TestStepsPromotionNeedsEveryStepsDuration(t *testing.T) {
	g := gomega.NewWithT(t)
	f := stepsFleet(t)
	f.passStep()
	f.passStep()
	f.wait(time.Second)
	f.analysisPasses()
	f.writeStatus(promote)
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{EarlyPromotion}))
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring("its duration is 30s"))
}

func TestStepsPromotionAfterEveryStepPasses(t *testing.T) {
	g := gomega.NewWithT(t)
	f := stepsFleet(t)
	f.passStep()
	f.passStep()
	f.wait(10 * time.Second)
	f.analysisPasses()
	f.writeStatus(promote)
	g.Expect(f.settle()).To(gomega.BeEmpty())
}

func TestStepsSkippedByAPersonNeedNoDuration(t *testing.T) {
	g := gomega.NewWithT(t)
	f := stepsFleet(t)
	f.annotate(v1alpha1.CanarySkipStepAnnotation, "v2/1")
	f.nextStep(v1alpha1.CanaryStepSkipped, "")
	f.passStep()
	f.wait(10 * time.Second)
	f.analysisPasses()
	f.writeStatus(promote)
	g.Expect(f.settle()).To(gomega.BeEmpty())
}

func TestStepEndedWithoutASuccessfulAnalysisIsCaught(t *testing.T) {
	g := gomega.NewWithT(t)
	f := stepsFleet(t)
	f.wait(10 * time.Second)
	f.nextStep(v1alpha1.CanaryStepSuccessful, v1alpha1.AnalysisRunning)
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{EarlyPromotion}))
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring("went on from step 1 without its analysis seen Successful during the step"))
}

func TestStepEndedBeforeItsDurationIsCaught(t *testing.T) {
	g := gomega.NewWithT(t)
	f := stepsFleet(t)
	f.wait(4 * time.Second)
	f.analysisPasses()
	f.nextStep(v1alpha1.CanaryStepSuccessful, v1alpha1.AnalysisSuccessful)
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{EarlyPromotion}))
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring("went on from step 1 after"))
}

// A skip-step value left from an earlier canary (the bare step number the
// annotation allows) does not skip the step of a later one.
func TestLeftoverSkipOfAnEarlierCanaryIsCaught(t *testing.T) {
	g := gomega.NewWithT(t)
	f := newFleet(t, 4, intstr.FromInt32(1), intstr.FromInt32(0))
	f.annotate(v1alpha1.CanarySkipStepAnnotation, "1")
	f.wait(2 * time.Second)
	f.eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{Steps: []v1alpha1.CanaryStep{
		{Replicas: intstr.FromInt32(1), Duration: &metav1.Duration{Duration: 10 * time.Second}},
		{Replicas: intstr.FromInt32(2), Duration: &metav1.Duration{Duration: 10 * time.Second}},
	}}
	f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) {
		start := metav1.NewTime(f.now.Add(time.Second))
		st.Canary = &v1alpha1.CanaryStatus{ReplicaSet: "v2", StartedAt: &start, Step: 1, StepStartedAt: &start,
			Steps: []v1alpha1.CanaryStepStatus{{Step: 1, StartedAt: start, Result: v1alpha1.CanaryStepRunning}}}
	})
	f.nextStep(v1alpha1.CanaryStepSkipped, "")
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{EarlyPromotion}))
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring("went on from step 1 after"))
}

func TestLastStepSkippedByAPersonPromotesAtOnce(t *testing.T) {
	for _, value := range []string{"3", "v2/3", "v2@k3x9/3"} {
		g := gomega.NewWithT(t)
		f := stepsFleet(t)
		f.passStep()
		f.passStep()
		f.annotate(v1alpha1.CanarySkipStepAnnotation, value)
		f.writeStatus(promote)
		g.Expect(f.settle()).To(gomega.BeEmpty(), value)
	}
}

func TestSkipOfAnotherReplicaSetOrStepIsCaught(t *testing.T) {
	for _, value := range []string{"2", "v3/3", "v2/2", "v2x@k3x9/3"} {
		g := gomega.NewWithT(t)
		f := stepsFleet(t)
		f.passStep()
		f.passStep()
		f.annotate(v1alpha1.CanarySkipStepAnnotation, value)
		f.writeStatus(promote)
		g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{EarlyPromotion}), value)
	}
}

// evict has the first pod on node evicted: the API server marks it
// DisruptionTarget, then deletes it.
func (f *fleet) evict(node string) {
	pod := f.pods[node][0]
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"})
	f.c.Pod(pod.DeepCopy(), false, f.step())
	f.remove(node)
}

// An evicted agent is not the rollout's doing, as one that fails alone.
func TestEvictedAgentsAreNotTheRollouts(t *testing.T) {
	g := gomega.NewWithT(t)
	f := newFleet(t, 4, intstr.FromInt32(1), intstr.FromInt32(0))
	f.remove("node-0")
	f.evict("node-1")
	g.Expect(f.settle()).To(gomega.BeEmpty())
	f.remove("node-2")
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{Unavailable}), "the rollout may not add to an eviction it has seen")
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring(fmt.Sprintf("(%s)", "node-0, node-1, node-2")))
}

// A canary whose node stopped (its kubelet dead, the node Ready Unknown)
// ran on nothing there: its duration's end does not promote it.
func TestPromotionOnADeadCanaryNodeIsCaught(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, false)
	f.wait(2 * time.Second)
	dead := readyNode("node-0")
	dead.Status.Conditions[0].Status = corev1.ConditionUnknown
	f.c.Node(dead, false, f.step())
	f.wait(10 * time.Second)
	f.writeStatus(promote)
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{EarlyPromotion}))
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring("1 of its 1 nodes had no available canary pod on a Ready node: node-0"))
}

func TestPromotionOfACrashingCanaryIsCaught(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, false)
	f.wait(10 * time.Second)
	f.fail("node-0")
	f.wait(2 * time.Second)
	f.writeStatus(promote)
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{EarlyPromotion}))
}

// The controller's view lags the monitor's: a canary pod that fails as
// the canary is promoted was available as far as it could know.
func TestCanaryPodFailingAsItIsPromotedIsNotHeldAgainstIt(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, false)
	f.wait(10 * time.Second)
	f.fail("node-0")
	f.writeStatus(promote)
	g.Expect(f.settle()).To(gomega.BeEmpty())
}

// The monitor may hear of the canary pod after the promotion: the other
// watches get their grace.
func TestCanaryPodSeenReadyAfterThePromotionWithinTheGracePasses(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, false)
	f.fail("node-0")
	f.wait(10 * time.Second)
	f.writeStatus(promote)
	setReady(f.pods["node-0"][0], true)
	f.c.Pod(f.pods["node-0"][0].DeepCopy(), false, f.step())
	g.Expect(f.settle()).To(gomega.BeEmpty())
}

// A person's validation promotes whatever the canary's pods do.
func TestValidatedCanaryMayBePromotedWhateverItsPods(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, false)
	f.fail("node-0")
	f.annotate(v1alpha1.CanaryValidatedAnnotation, "v2")
	f.writeStatus(promote)
	g.Expect(f.settle()).To(gomega.BeEmpty())
}

func TestPromotionOnNoCanaryNodeIsCaught(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, false)
	f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) { st.Canary.Nodes = nil })
	f.wait(10 * time.Second)
	f.writeStatus(promote)
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{EarlyPromotion}))
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring("promoted on no canary node, with 4 nodes to run on"))
}

func TestCanaryNodeDyingAsItIsPromotedIsNotHeldAgainstIt(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, false)
	f.wait(10 * time.Second)
	dead := readyNode("node-0")
	dead.Status.Conditions[0].Status = corev1.ConditionUnknown
	f.c.Node(dead, false, f.step())
	f.writeStatus(promote)
	g.Expect(f.settle()).To(gomega.BeEmpty())
}
