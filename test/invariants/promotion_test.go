package invariants

import (
	"fmt"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
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

// validateInSpec sets spec.strategy.canary.validate, as a person does: a
// new generation, shown to the checker with the next status.
func (f *fleet) validateInSpec(value string) {
	f.eds.Spec.Strategy.Canary.Validate = value
	f.eds.Generation++
}

// wait lets d pass, a second at a time.
func (f *fleet) wait(d time.Duration) {
	for range int(d / time.Second) {
		f.step()
	}
}

// canaryStatus is a new instance of canary replicaSet on nodes, started
// with the next step.
func (f *fleet) canaryStatus(replicaSet string, nodes ...string) *v1alpha1.CanaryStatus {
	return &v1alpha1.CanaryStatus{ReplicaSet: replicaSet, Nodes: nodes, StartedAt: ptr.To(metav1.NewTime(f.now.Add(time.Second)))}
}

// startCanary records a new instance of canary replicaSet on node-0,
// started now, its analysis not measured yet, and runs its pod there.
func (f *fleet) startCanary(replicaSet string) {
	cs := f.canaryStatus(replicaSet, "node-0")
	f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) { st.Canary = cs })
	f.remove("node-0")
	f.create("node-0", replicaSet, true)
}

// startSteps records a new instance of canary v2 on nodes, at step 1
// since its start.
func (f *fleet) startSteps(nodes ...string) {
	cs := f.canaryStatus("v2", nodes...)
	cs.Step, cs.StepStartedAt = 1, cs.StartedAt
	cs.Steps = []v1alpha1.CanaryStepStatus{{Step: 1, StartedAt: *cs.StartedAt, Result: v1alpha1.CanaryStepRunning}}
	f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) { st.Canary = cs })
}

func (f *fleet) analysisPasses() {
	f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) {
		st.Canary.Analysis = &v1alpha1.AnalysisStatus{Phase: v1alpha1.AnalysisSuccessful}
	})
}

func (f *fleet) canaryFails() {
	f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) { st.Canary.Failed = true })
}

func promote(st *v1alpha1.ExtendedDaemonSetStatus) {
	st.ActiveReplicaSet, st.Canary = st.Canary.ReplicaSet, nil
}

// promoteAfter lets d pass, then promotes the canary.
func (f *fleet) promoteAfter(d time.Duration) {
	f.wait(d)
	f.writeStatus(promote)
}

// passAndPromote lets d pass, has the analysis pass, then promotes the
// canary.
func (f *fleet) passAndPromote(d time.Duration) {
	f.wait(d)
	f.analysisPasses()
	f.writeStatus(promote)
}

// showReady turns pod ready or not, and shows it to the checker.
func (f *fleet) showReady(pod *corev1.Pod, ready bool) {
	setReady(pod, ready)
	f.c.Pod(pod.DeepCopy(), false, f.step())
}

// stopKubelet has node's kubelet stop: its Ready condition turns Unknown.
func (f *fleet) stopKubelet(node string) {
	dead := readyNode(node)
	dead.Status.Conditions[0].Status = corev1.ConditionUnknown
	f.c.Node(dead, false, f.step())
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

func plainCanaryFleet(t *testing.T) *fleet    { return canaryFleet(t, false) }
func analysedCanaryFleet(t *testing.T) *fleet { return canaryFleet(t, true) }

// canaryStep is a step of replicas canary nodes that lasts d.
func canaryStep(replicas int32, d time.Duration) v1alpha1.CanaryStep {
	return v1alpha1.CanaryStep{Replicas: intstr.FromInt32(replicas), Duration: &metav1.Duration{Duration: d}}
}

// stepsFleet is a canary v2 of three 10s steps with an analysis, on
// node-0, at step 1 since now.
func stepsFleet(t *testing.T) *fleet {
	f := newFleet(t, 4, intstr.FromInt32(1), intstr.FromInt32(0))
	f.eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Steps:    []v1alpha1.CanaryStep{canaryStep(1, 10*time.Second), canaryStep(1, 10*time.Second), canaryStep(1, 10*time.Second)},
		Analysis: &v1alpha1.CanaryAnalysis{},
	}
	// Its pod first, so that its steps' clocks start with the story.
	f.remove("node-0")
	f.create("node-0", "v2", true)
	f.startSteps("node-0")
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

// story is one case of the promotion rule: what is told the checker on a
// fleet of its own, and what the checker must find once every grace has
// passed: nothing, or (early) a single EarlyPromotion whose message
// matches says when says is set.
type story struct {
	name  string
	fleet func(*testing.T) *fleet
	tell  func(*fleet)
	early bool
	says  types.GomegaMatcher
}

// tellStories runs each story as a subtest of its name.
func tellStories(t *testing.T, stories ...story) {
	t.Helper()
	for _, s := range stories {
		t.Run(s.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			f := s.fleet(t)
			s.tell(f)
			if !s.early {
				g.Expect(f.settle()).To(gomega.BeEmpty())
				return
			}
			g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{EarlyPromotion}))
			if s.says != nil {
				g.Expect(f.c.Violations()[0].Message).To(s.says)
			}
		})
	}
}

func TestPromotionWaitsForTheDurationAndTheAnalysis(t *testing.T) {
	tellStories(t,
		story{name: "PromotionBeforeTheDurationIsCaught", fleet: plainCanaryFleet, tell: func(f *fleet) { f.writeStatus(promote) },
			early: true, says: gomega.ContainSubstring("its duration is 10s")},
		story{name: "PromotionAfterTheDurationPasses", fleet: plainCanaryFleet, tell: func(f *fleet) { f.promoteAfter(10 * time.Second) }},
		story{name: "PromotionWithoutASuccessfulAnalysisIsCaught", fleet: analysedCanaryFleet,
			tell: func(f *fleet) {
				f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) {
					st.Canary.Analysis = &v1alpha1.AnalysisStatus{Phase: v1alpha1.AnalysisRunning}
				})
				f.promoteAfter(10 * time.Second)
			},
			early: true, says: gomega.ContainSubstring("with its analysis Running")},
		story{name: "PromotionAfterASuccessfulAnalysisPasses", fleet: analysedCanaryFleet, tell: func(f *fleet) { f.passAndPromote(10 * time.Second) }},
	)
}

func TestValidatedCanaryMayBePromotedAtOnce(t *testing.T) {
	tellStories(t,
		story{name: "ValidatedCanaryMayBePromotedAtOnce", fleet: analysedCanaryFleet,
			tell: func(f *fleet) { f.annotate(v1alpha1.CanaryValidatedAnnotation, "v2"); f.writeStatus(promote) }},
		// kubectl eds names the instance it validates after the replica set.
		story{name: "ValidationNamingTheInstanceMayPromoteAtOnce", fleet: analysedCanaryFleet,
			tell: func(f *fleet) { f.annotate(v1alpha1.CanaryValidatedAnnotation, "v2@k3x9"); f.writeStatus(promote) }},
		story{name: "ValidatedThroughTheSpecTwinMayBePromotedAtOnce", fleet: analysedCanaryFleet,
			tell: func(f *fleet) { f.validateInSpec("v2"); f.writeStatus(promote) }},
		// A person's validation promotes whatever the canary's pods do.
		story{name: "ValidatedCanaryMayBePromotedWhateverItsPods", fleet: plainCanaryFleet,
			tell: func(f *fleet) {
				f.fail("node-0")
				f.annotate(v1alpha1.CanaryValidatedAnnotation, "v2")
				f.writeStatus(promote)
			}},
	)
}

// A canary instance earns its promotion anew: what an earlier instance of
// its replica set was given or measured does not count.
func TestPromotionIsEarnedByEachInstance(t *testing.T) {
	// v2 validated by validate and promoted, v3 promoted after its
	// duration, then v2 again.
	v2Again := func(validate func(*fleet)) func(*fleet) {
		return func(f *fleet) {
			validate(f)
			f.writeStatus(promote)
			f.startCanary("v3")
			f.promoteAfter(10 * time.Second)
			gomega.NewWithT(f.t).Expect(f.settle()).To(gomega.BeEmpty(), "v2 validated, v3 ran its duration")
			f.startCanary("v2")
			f.writeStatus(promote)
		}
	}
	tellStories(t,
		// The template of a validated canary applied again starts another
		// canary of the same replica set: the validation left from the
		// first does not promote it (`kubectl eds canary validate`,
		// rollback, apply again).
		story{name: "LeftoverValidationOfAnEarlierInstanceIsCaught", fleet: plainCanaryFleet,
			tell:  v2Again(func(f *fleet) { f.annotate(v1alpha1.CanaryValidatedAnnotation, "v2") }),
			early: true, says: gomega.MatchRegexp(`canary v2 promoted after \ds, its duration is 10s, and no validation was given since it started`)},
		story{name: "LeftoverValidationSpecTwinOfAnEarlierInstanceIsCaught", fleet: plainCanaryFleet,
			tell: v2Again(func(f *fleet) { f.validateInSpec("v2") }), early: true},
		// A retried canary is a new instance: its duration counts from its
		// new start, not from the first one's.
		story{name: "RetriedCanaryRunsItsDurationAgain", fleet: plainCanaryFleet,
			tell: func(f *fleet) {
				f.wait(8 * time.Second)
				f.canaryFails()
				f.annotate(v1alpha1.CanaryRetryAnnotation, "1")
				f.startCanary("v2")
				f.promoteAfter(4 * time.Second)
			},
			early: true, says: gomega.ContainSubstring("its duration is 10s")},
		// An analysis a new instance shows passed from its first status
		// was not measured on it: it comes from an earlier one.
		story{name: "AnalysisCarriedOverFromAnEarlierInstanceIsCaught", fleet: analysedCanaryFleet,
			tell: func(f *fleet) {
				f.wait(10 * time.Second)
				f.analysisPasses()
				f.canaryFails()
				cs := f.canaryStatus("v2", "node-0")
				cs.Analysis = &v1alpha1.AnalysisStatus{Phase: v1alpha1.AnalysisSuccessful}
				f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) { st.Canary = cs })
				f.promoteAfter(10 * time.Second)
			},
			early: true, says: gomega.ContainSubstring("not seen pass since it started")},
	)
}

func TestPromotionOfNoGoodCanaryIsCaught(t *testing.T) {
	tellStories(t,
		story{name: "FailedCanaryPromotedIsCaught", fleet: plainCanaryFleet,
			tell:  func(f *fleet) { f.wait(10 * time.Second); f.canaryFails(); f.writeStatus(promote) },
			early: true, says: gomega.ContainSubstring("promoted though it failed")},
		story{name: "PromotionWithNoCanaryOfItRunningIsCaught", fleet: plainCanaryFleet,
			tell: func(f *fleet) {
				f.wait(10 * time.Second)
				f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) { st.ActiveReplicaSet, st.Canary = "v3", nil })
			},
			early: true, says: gomega.ContainSubstring("v3 promoted with no canary of it running (running: v2)")},
		story{name: "PromotionOnNoCanaryNodeIsCaught", fleet: plainCanaryFleet,
			tell: func(f *fleet) {
				f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) { st.Canary.Nodes = nil })
				f.promoteAfter(10 * time.Second)
			},
			early: true, says: gomega.ContainSubstring("promoted on no canary node, with 4 nodes to run on")},
	)
}

// A canary promoted on its own must have run an available pod on a Ready
// node on each of its nodes, as far as the controller could know.
func TestPromotionIsJudgedOnTheCanaryPods(t *testing.T) {
	tellStories(t,
		// A canary whose node stopped (its kubelet dead, the node Ready
		// Unknown) ran on nothing there: its duration's end does not
		// promote it.
		story{name: "PromotionOnADeadCanaryNodeIsCaught", fleet: plainCanaryFleet,
			tell:  func(f *fleet) { f.wait(2 * time.Second); f.stopKubelet("node-0"); f.promoteAfter(10 * time.Second) },
			early: true, says: gomega.ContainSubstring("1 of its 1 nodes had no available canary pod on a Ready node: node-0")},
		story{name: "PromotionOfACrashingCanaryIsCaught", fleet: plainCanaryFleet,
			tell: func(f *fleet) { f.wait(10 * time.Second); f.fail("node-0"); f.promoteAfter(2 * time.Second) }, early: true},
		// The controller's view lags the monitor's: a canary pod that
		// fails as the canary is promoted was available as far as it
		// could know.
		story{name: "CanaryPodFailingAsItIsPromotedIsNotHeldAgainstIt", fleet: plainCanaryFleet,
			tell: func(f *fleet) { f.wait(10 * time.Second); f.fail("node-0"); f.writeStatus(promote) }},
		story{name: "CanaryNodeDyingAsItIsPromotedIsNotHeldAgainstIt", fleet: plainCanaryFleet,
			tell: func(f *fleet) { f.wait(10 * time.Second); f.stopKubelet("node-0"); f.writeStatus(promote) }},
		// The monitor may hear of the canary pod after the promotion: the
		// other watches get their grace.
		story{name: "CanaryPodSeenReadyAfterThePromotionWithinTheGracePasses", fleet: plainCanaryFleet,
			tell: func(f *fleet) {
				f.fail("node-0")
				f.promoteAfter(10 * time.Second)
				f.showReady(f.pods["node-0"][0], true)
			}},
	)
}

func TestStepsPromotion(t *testing.T) {
	stories := []story{
		{name: "StepsPromotionNeedsEveryStepsDuration", fleet: stepsFleet,
			tell:  func(f *fleet) { f.passStep(); f.passStep(); f.passAndPromote(time.Second) },
			early: true, says: gomega.ContainSubstring("its duration is 30s")},
		{name: "StepsPromotionAfterEveryStepPasses", fleet: stepsFleet,
			tell: func(f *fleet) { f.passStep(); f.passStep(); f.passAndPromote(10 * time.Second) }},
		{name: "StepsSkippedByAPersonNeedNoDuration", fleet: stepsFleet,
			tell: func(f *fleet) {
				f.annotate(v1alpha1.CanarySkipStepAnnotation, "v2/1")
				f.nextStep(v1alpha1.CanaryStepSkipped, "")
				f.passStep()
				f.passAndPromote(10 * time.Second)
			}},
	}
	// The first two steps passed, then a skip of the last step, with a
	// value naming it or another one.
	skipLast := func(value string) func(*fleet) {
		return func(f *fleet) {
			f.passStep()
			f.passStep()
			f.annotate(v1alpha1.CanarySkipStepAnnotation, value)
			f.writeStatus(promote)
		}
	}
	for _, value := range []string{"3", "v2/3", "v2@k3x9/3"} {
		stories = append(stories, story{name: "LastStepSkippedByAPersonPromotesAtOnce " + value, fleet: stepsFleet, tell: skipLast(value)})
	}
	for _, value := range []string{"2", "v3/3", "v2/2", "v2x@k3x9/3"} {
		stories = append(stories, story{name: "SkipOfAnotherReplicaSetOrStepIsCaught " + value, fleet: stepsFleet, tell: skipLast(value), early: true})
	}
	tellStories(t, stories...)
}

func TestStepEndIsJudged(t *testing.T) {
	tellStories(t,
		story{name: "StepEndedWithoutASuccessfulAnalysisIsCaught", fleet: stepsFleet,
			tell: func(f *fleet) {
				f.wait(10 * time.Second)
				f.nextStep(v1alpha1.CanaryStepSuccessful, v1alpha1.AnalysisRunning)
			},
			early: true, says: gomega.ContainSubstring("went on from step 1 without its analysis seen Successful during the step")},
		story{name: "StepEndedBeforeItsDurationIsCaught", fleet: stepsFleet,
			tell: func(f *fleet) {
				f.wait(4 * time.Second)
				f.analysisPasses()
				f.nextStep(v1alpha1.CanaryStepSuccessful, v1alpha1.AnalysisSuccessful)
			},
			early: true, says: gomega.ContainSubstring("went on from step 1 after")},
		// A skip-step value left from an earlier canary (the bare step
		// number the annotation allows) does not skip the step of a later
		// one.
		story{name: "LeftoverSkipOfAnEarlierCanaryIsCaught",
			fleet: func(t *testing.T) *fleet { return newFleet(t, 4, intstr.FromInt32(1), intstr.FromInt32(0)) },
			tell: func(f *fleet) {
				f.annotate(v1alpha1.CanarySkipStepAnnotation, "1")
				f.wait(2 * time.Second)
				f.eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{Steps: []v1alpha1.CanaryStep{canaryStep(1, 10*time.Second), canaryStep(2, 10*time.Second)}}
				f.startSteps()
				f.nextStep(v1alpha1.CanaryStepSkipped, "")
			},
			early: true, says: gomega.ContainSubstring("went on from step 1 after")},
	)
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
