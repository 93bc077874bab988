package canary

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

func timed(replicas intstr.IntOrString, d time.Duration) v1alpha1.CanaryStep {
	return v1alpha1.CanaryStep{Replicas: replicas, Duration: dur(d)}
}

// threeSteps grows a canary over 20 nodes from 1 node to 25% then 50%,
// judged by an analysis at every step.
func threeSteps() *v1alpha1.CanaryStrategy {
	return &v1alpha1.CanaryStrategy{
		Steps: []v1alpha1.CanaryStep{
			timed(intstr.FromInt32(1), time.Minute), timed(intstr.FromString("25%"), 2*time.Minute), timed(intstr.FromString("50%"), 3*time.Minute),
		},
		Analysis: &v1alpha1.CanaryAnalysis{Metrics: []v1alpha1.AnalysisMetric{{Name: "errors", Query: "up"}}},
	}
}

// run is a canary being stepped the way the controller does: each decision
// is recorded and fed back, with the pods ready and the analysis as said.
type run struct {
	in  Input
	res Result
}

func newRun(strategy *v1alpha1.CanaryStrategy, nodes int) *run {
	return &run{in: Input{
		Strategy: strategy, ReplicaSet: "rs-2", TemplateHash: "h2",
		Candidates: zoned(nodes, "a", "b"), Desired: nodes,
		Pods: []*corev1.Pod{canaryPod("rs-2-x")}, Now: start,
	}}
}

// at steps the canary at start+d with analysis as its measured analysis
// (nil for none yet).
func (r *run) at(t *testing.T, d time.Duration, analysis *v1alpha1.AnalysisStatus) Result {
	t.Helper()
	r.in.Now, r.in.Ready, r.in.Analysis = start.Add(d), true, analysis
	res, err := Step(r.in)
	if err != nil {
		t.Fatalf("step at %s: %v", d, err)
	}
	r.in.Status, r.res = res.Status, res
	return res
}

var successful = analysisAt(v1alpha1.AnalysisSuccessful, "every metric passed")

func TestStepsGrowStepByStepJudgedAtEach(t *testing.T) {
	g := gomega.NewWithT(t)
	r := newRun(threeSteps(), 20)

	res := r.at(t, 0, nil)
	g.Expect(res.Transition).To(gomega.Equal(Started))
	g.Expect(res.Status.Step).To(gomega.BeEquivalentTo(1))
	g.Expect(res.Status.Nodes).To(gomega.HaveLen(1))
	g.Expect(res.RequeueAfter).To(gomega.Equal(time.Minute), "step 1 waits for its own duration")

	res = r.at(t, time.Minute, nil)
	g.Expect(res.Status.Step).To(gomega.BeEquivalentTo(1), "the duration alone does not end a step judged by an analysis")
	g.Expect(res.Status.Reason).To(gomega.Equal(ReasonWaitingForAnalysis))

	r.at(t, time.Minute, successful)
	res = r.at(t, time.Minute+time.Second, successful)
	g.Expect(res.Transition).To(gomega.Equal(StepStarted))
	g.Expect(res.Promote).To(gomega.BeFalse())
	st := res.Status
	g.Expect(st.Step).To(gomega.BeEquivalentTo(2))
	g.Expect(st.Nodes).To(gomega.HaveLen(5), "25% of 20 nodes")
	g.Expect(st.Analysis).To(gomega.BeNil(), "step 2 is judged on its own measurements")
	g.Expect(st.ReadyAt).To(gomega.BeNil(), "step 2 measures once its own pods are available")
	g.Expect(st.StepStartedAt.Time).To(gomega.Equal(start.Add(time.Minute + time.Second)))
	g.Expect(st.Steps).To(gomega.HaveLen(2))
	g.Expect(st.Steps[0]).To(gomega.And(
		gomega.HaveField("Result", v1alpha1.CanaryStepSuccessful), gomega.HaveField("Nodes", gomega.BeEquivalentTo(1)),
		gomega.HaveField("Analysis", v1alpha1.AnalysisSuccessful), gomega.HaveField("FinishedAt", gomega.Not(gomega.BeNil()))))
	g.Expect(st.Steps[1]).To(gomega.And(gomega.HaveField("Result", v1alpha1.CanaryStepRunning), gomega.HaveField("Replicas", "25%"),
		gomega.HaveField("Nodes", gomega.BeEquivalentTo(5))))
	g.Expect(StepMessage(st, r.in.Strategy, r.in.Now)).To(gomega.Equal("step 2 of 3: 25% (5 nodes), 2m left"))

	// The analysis of step 1 carried into step 2 would promote it at once.
	res = r.at(t, 3*time.Minute+2*time.Second, nil)
	g.Expect(res.Status.Step).To(gomega.BeEquivalentTo(2))
	g.Expect(res.Status.Reason).To(gomega.Equal(ReasonWaitingForAnalysis))

	r.at(t, 3*time.Minute+2*time.Second, successful)
	res = r.at(t, 3*time.Minute+3*time.Second, successful)
	g.Expect(res.Status.Step).To(gomega.BeEquivalentTo(3))
	g.Expect(res.Status.Nodes).To(gomega.HaveLen(10))

	r.at(t, 6*time.Minute+3*time.Second, successful)
	res = r.at(t, 6*time.Minute+4*time.Second, successful)
	g.Expect(res.Promote).To(gomega.BeTrue(), "the last step's end is the promotion")
	g.Expect(res.Transition).To(gomega.Equal(Promoted))
}

func TestStepsPersonsControls(t *testing.T) {
	cases := []struct {
		name        string
		annotations map[string]string
		spec        func(*v1alpha1.CanaryStrategy)
		wantStep    int32
		promote     bool
		skipped     bool
	}{
		{name: "skip-step naming the current step", annotations: map[string]string{v1alpha1.CanarySkipStepAnnotation: "2"}, wantStep: 3, skipped: true},
		{name: "skip-step naming another step", annotations: map[string]string{v1alpha1.CanarySkipStepAnnotation: "1"}, wantStep: 2},
		{name: "skip-step naming this canary's step", annotations: map[string]string{v1alpha1.CanarySkipStepAnnotation: "rs-2/2"}, wantStep: 3, skipped: true},
		{name: "skip-step left behind by another canary", annotations: map[string]string{v1alpha1.CanarySkipStepAnnotation: "rs-1/2"}, wantStep: 2},
		{name: "skip-step naming this canary's other step", annotations: map[string]string{v1alpha1.CanarySkipStepAnnotation: "rs-2/1"}, wantStep: 2},
		{name: "spec skipStep of this canary", spec: func(s *v1alpha1.CanaryStrategy) { s.SkipStep = "rs-2/2" }, wantStep: 3, skipped: true},
		{name: "spec skipStep of another canary", spec: func(s *v1alpha1.CanaryStrategy) { s.SkipStep = "rs-1/2" }, wantStep: 2},
		{name: "validate promotes every step", annotations: map[string]string{v1alpha1.CanaryValidatedAnnotation: "rs-2"}, promote: true},
		{name: "spec validate promotes every step", spec: func(s *v1alpha1.CanaryStrategy) { s.Validate = "rs-2" }, promote: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			r := newRun(threeSteps(), 20)
			r.at(t, 0, nil)
			r.at(t, time.Minute, successful)
			r.at(t, time.Minute+time.Second, successful)
			g.Expect(r.in.Status.Step).To(gomega.BeEquivalentTo(2))
			r.in.Annotations = tc.annotations
			if tc.spec != nil {
				tc.spec(r.in.Strategy)
			}
			// Early in step 2, its analysis not even started.
			res := r.at(t, time.Minute+10*time.Second, nil)
			g.Expect(res.Promote).To(gomega.Equal(tc.promote))
			if tc.promote {
				return
			}
			g.Expect(res.Status.Step).To(gomega.Equal(tc.wantStep))
			if tc.skipped {
				g.Expect(res.Status.Steps[1].Result).To(gomega.Equal(v1alpha1.CanaryStepSkipped))
				// Set twice, the annotation skips one step only.
				res = r.at(t, time.Minute+11*time.Second, nil)
				g.Expect(res.Status.Step).To(gomega.Equal(tc.wantStep))
			}
		})
	}
}

func TestStepsPauseStepWaitsForAPerson(t *testing.T) {
	g := gomega.NewWithT(t)
	strategy := &v1alpha1.CanaryStrategy{Steps: []v1alpha1.CanaryStep{
		timed(intstr.FromInt32(1), time.Minute), {Replicas: intstr.FromInt32(1), Pause: true}, timed(intstr.FromInt32(3), time.Minute),
	}, AutoFail: &v1alpha1.CanaryAutoFail{MaxRestarts: ptr.To[int32](5)}}
	r := newRun(strategy, 6)
	r.at(t, 0, nil)
	res := r.at(t, time.Minute, nil)
	g.Expect(res.Status.Step).To(gomega.BeEquivalentTo(2))
	g.Expect(res.Transition).To(gomega.Equal(StepStarted))
	res = r.at(t, time.Hour, nil)
	g.Expect(res.Status.Paused).To(gomega.BeTrue())
	g.Expect(res.Status.Reason).To(gomega.Equal(ReasonWaitingForStep))
	g.Expect(res.Transition).To(gomega.BeEmpty(), "waiting at a pause step is the step's normal state, told when it started")
	g.Expect(StepMessage(res.Status, strategy, r.in.Now)).To(gomega.Equal("step 2 of 3: 1 (1 nodes), waits for a person to skip it"))

	// A pause step is still judged: a crash-looping canary fails there.
	failing := *r
	failing.in.Pods = []*corev1.Pod{canaryPod("rs-2-x", restarts(9, "CrashLoopBackOff", "Error"))}
	res = failing.at(t, time.Hour+time.Second, nil)
	g.Expect(res.Status.Failed).To(gomega.BeTrue())

	r.in.Annotations = map[string]string{v1alpha1.CanarySkipStepAnnotation: "2"}
	res = r.at(t, time.Hour+time.Second, nil)
	g.Expect(res.Status.Step).To(gomega.BeEquivalentTo(3))
	g.Expect(res.Status.Paused).To(gomega.BeFalse())
	g.Expect(res.Status.Nodes).To(gomega.HaveLen(3))
}

func TestStepsFailureAtAnyStepFailsTheCanary(t *testing.T) {
	g := gomega.NewWithT(t)
	r := newRun(threeSteps(), 20)
	r.at(t, 0, nil)
	r.at(t, time.Minute, successful)
	r.at(t, time.Minute+time.Second, successful)
	res := r.at(t, 2*time.Minute, analysisAt(v1alpha1.AnalysisFailed, "errors: 0.3 above 0.01"))
	g.Expect(res.Promote).To(gomega.BeFalse())
	g.Expect(res.Transition).To(gomega.Equal(Failed))
	st := res.Status
	g.Expect(st.Failed).To(gomega.BeTrue())
	g.Expect(st.Reason).To(gomega.Equal(ReasonAnalysisFailed))
	g.Expect(st.Steps[1]).To(gomega.And(gomega.HaveField("Result", v1alpha1.CanaryStepFailed), gomega.HaveField("Analysis", v1alpha1.AnalysisFailed)))
	// Failed stays failed, at every later reconcile.
	res = r.at(t, time.Hour, successful)
	g.Expect(res.Status.Failed).To(gomega.BeTrue())
	g.Expect(res.Promote).To(gomega.BeFalse())
}

func TestStepCounts(t *testing.T) {
	cases := []struct {
		name    string
		steps   []intstr.IntOrString
		desired int
		want    []int
		err     string
	}{
		{"counts", []intstr.IntOrString{intstr.FromInt32(1), intstr.FromInt32(3)}, 10, []int{1, 3}, ""},
		{"percentages rounded up", []intstr.IntOrString{intstr.FromString("5%"), intstr.FromString("50%")}, 10, []int{1, 5}, ""},
		{"capped at the nodes there are", []intstr.IntOrString{intstr.FromInt32(2), intstr.FromInt32(40)}, 10, []int{2, 10}, ""},
		{"equal counts hold the canary", []intstr.IntOrString{intstr.FromInt32(2), intstr.FromString("10%")}, 20, []int{2, 2}, ""},
		{"a count then a smaller percentage", []intstr.IntOrString{intstr.FromInt32(5), intstr.FromString("10%")}, 20, nil, "steps must not shrink"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			steps := make([]v1alpha1.CanaryStep, len(tc.steps))
			for i, r := range tc.steps {
				steps[i] = timed(r, time.Minute)
			}
			got, err := StepCounts(steps, tc.desired)
			if tc.err != "" {
				g.Expect(err).To(gomega.MatchError(gomega.ContainSubstring(tc.err)))
				g.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("spec.strategy.canary.steps[1]")))
				return
			}
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(got).To(gomega.Equal(tc.want))
		})
	}
}

// A canary whose steps would shrink is refused by Step, which the
// controller reports as an invalid spec.
func TestStepsThatShrinkAreAnError(t *testing.T) {
	strategy := &v1alpha1.CanaryStrategy{Steps: []v1alpha1.CanaryStep{timed(intstr.FromInt32(5), time.Minute), timed(intstr.FromString("10%"), time.Minute)}}
	_, err := Step(newRun(strategy, 20).in)
	gomega.NewWithT(t).Expect(err).To(gomega.MatchError(gomega.ContainSubstring("must not shrink")))
}

// Over random steps, nodes and analysis verdicts: the canary set never
// shrinks while nodes stay, no step ends without its duration and a
// Successful analysis of its own, a failure at any step fails the whole
// canary, and promotion comes only after the last step.
func TestStepsProperties(t *testing.T) {
	for seed := range uint64(300) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 16))
			nodes := 1 + rnd.IntN(30)
			var steps []v1alpha1.CanaryStep
			pct := 0
			for range 1 + rnd.IntN(v1alpha1.MaxCanarySteps) {
				pct = min(100, pct+1+rnd.IntN(30))
				steps = append(steps, timed(intstr.FromString(fmt.Sprintf("%d%%", pct)), time.Duration(1+rnd.IntN(5))*time.Minute))
			}
			strategy := &v1alpha1.CanaryStrategy{Steps: steps, Analysis: threeSteps().Analysis}
			failAt := rnd.IntN(len(steps) + 2) // beyond the steps: never fails
			r := newRun(strategy, nodes)
			now := time.Duration(0)
			var previous []string
			var stepStart time.Duration
			step := int32(1)
			for range 200 {
				now += time.Duration(rnd.IntN(90)) * time.Second
				analysis := successful
				switch {
				case int(r.stepOf()) == failAt+1 && rnd.IntN(3) == 0:
					analysis = analysisAt(v1alpha1.AnalysisFailed, "bad")
				case rnd.IntN(3) == 0:
					analysis = analysisAt(v1alpha1.AnalysisRunning, "measuring")
				}
				res := r.at(t, now, analysis)
				if res.Promote {
					if int(step) != len(steps) {
						t.Fatalf("promoted at step %d of %d", step, len(steps))
					}
					if now-stepStart < stepDuration(steps[step-1]) || analysis.Phase != v1alpha1.AnalysisSuccessful {
						t.Fatalf("promoted %s into the last step with analysis %s", now-stepStart, analysis.Phase)
					}
					return
				}
				st := res.Status
				if st.Failed {
					if analysis.Phase != v1alpha1.AnalysisFailed {
						t.Fatalf("failed without a failed analysis")
					}
					if last := st.Steps[len(st.Steps)-1]; last.Result != v1alpha1.CanaryStepFailed || last.Step != step {
						t.Fatalf("the failure is not recorded at step %d: %+v", step, last)
					}
					return
				}
				if !isSubset(previous, st.Nodes) {
					t.Fatalf("the canary set shrank: %v then %v", previous, st.Nodes)
				}
				if st.Step != step {
					if st.Step != step+1 {
						t.Fatalf("went from step %d to %d", step, st.Step)
					}
					if now-stepStart < stepDuration(steps[step-1]) || analysis.Phase != v1alpha1.AnalysisSuccessful {
						t.Fatalf("step %d ended after %s with analysis %s", step, now-stepStart, analysis.Phase)
					}
					if ended := st.Steps[len(st.Steps)-2]; ended.Result != v1alpha1.CanaryStepSuccessful {
						t.Fatalf("step %d ended %s", step, ended.Result)
					}
					step, stepStart = st.Step, now
				}
				previous = st.Nodes
			}
		})
	}
}

func (r *run) stepOf() int32 {
	if r.in.Status == nil {
		return 1
	}
	return r.in.Status.Step
}

func isSubset(a, b []string) bool {
	for _, n := range a {
		if !slices.Contains(b, n) {
			return false
		}
	}
	return true
}

// Steps that resolve to fewer nodes once the cluster shrank cannot go on,
// but the canary is still judged: a person's fail, autoFail and
// canaryTimeout fail it, and that verdict is what is recorded. Without a
// failing verdict the error stands and the canary keeps what it recorded.
func TestStepsThatShrinkStillJudgeTheCanary(t *testing.T) {
	strategy := &v1alpha1.CanaryStrategy{
		Steps:    []v1alpha1.CanaryStep{timed(intstr.FromInt32(5), time.Minute), timed(intstr.FromString("50%"), time.Minute)},
		AutoFail: &v1alpha1.CanaryAutoFail{MaxRestarts: ptr.To[int32](5), CanaryTimeout: dur(time.Hour)},
		Analysis: threeSteps().Analysis,
	}
	cases := []struct {
		name   string
		mutate func(in *Input)
		reason string
	}{
		{"failed by a person", func(in *Input) { in.Annotations = map[string]string{v1alpha1.CanaryFailedAnnotation: "rs-2"} }, ReasonManual},
		{"failed by autoFail", func(in *Input) {
			in.Pods = []*corev1.Pod{canaryPod("rs-2-x", restarts(9, "CrashLoopBackOff", "Error"))}
		}, "CrashLoopBackOff"},
		{"failed by canaryTimeout", func(in *Input) { in.Now = start.Add(2 * time.Hour) }, ReasonTimeoutExceeded},
		{"failed by its analysis", func(in *Input) { in.Analysis = analysisAt(v1alpha1.AnalysisFailed, "errors: 0.3 above 0.01") }, ReasonAnalysisFailed},
		{"not failed", func(*Input) {}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			r := newRun(strategy, 20)
			r.at(t, 0, nil)
			g.Expect(r.in.Status.Nodes).To(gomega.HaveLen(5))
			recorded := r.in.Status.DeepCopy()
			// The cluster shrank to 8 nodes: step 2 is 4 nodes, fewer than step 1's 5.
			r.in.Desired, r.in.Candidates = 8, r.in.Candidates[:8]
			r.in.Now = start.Add(30 * time.Second)
			tc.mutate(&r.in)
			res, err := Step(r.in)
			g.Expect(res.Status).NotTo(gomega.BeNil(), "the canary's record is kept")
			if tc.reason == "" {
				g.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("must not shrink")))
				g.Expect(res.Status.Failed).To(gomega.BeFalse())
				g.Expect(res.Status.Nodes).To(gomega.Equal(recorded.Nodes), "the canary nodes stay while the steps cannot resolve")
				g.Expect(res.RequeueAfter).To(gomega.BeNumerically(">", 0), "canaryTimeout must still fire")
				return
			}
			g.Expect(err).NotTo(gomega.HaveOccurred(), "a failed canary no longer needs its steps")
			g.Expect(res.Status.Failed).To(gomega.BeTrue())
			g.Expect(res.Status.Reason).To(gomega.Equal(tc.reason))
			g.Expect(res.Transition).To(gomega.Equal(Failed))
			g.Expect(res.Status.Steps[len(res.Status.Steps)-1].Result).To(gomega.Equal(v1alpha1.CanaryStepFailed))
		})
	}
}

// A canary whose spec drops its steps goes on as one step of its
// duration, and the nodes its last step added are judged for the whole of
// it: the step's start, not the canary's, is when they began.
func TestStepsDroppedKeepTheNodesOfTheLastStepJudgedForTheDuration(t *testing.T) {
	g := gomega.NewWithT(t)
	strategy := &v1alpha1.CanaryStrategy{Steps: []v1alpha1.CanaryStep{
		timed(intstr.FromInt32(1), time.Minute), timed(intstr.FromString("25%"), 10*time.Minute),
	}}
	r := newRun(strategy, 20)
	r.at(t, 0, nil)
	res := r.at(t, time.Minute, nil)
	g.Expect(res.Status.Step).To(gomega.BeEquivalentTo(2))
	g.Expect(res.Status.Nodes).To(gomega.HaveLen(5), "step 2 adds four nodes at 1m")

	r.in.Strategy = &v1alpha1.CanaryStrategy{Replicas: ptr.To(intstr.FromString("25%")), Duration: dur(2 * time.Minute)}
	res = r.at(t, 90*time.Second, nil)
	g.Expect(res.Status.Nodes).To(gomega.HaveLen(5))
	res = r.at(t, 2*time.Minute+time.Second, nil)
	g.Expect(res.Promote).To(gomega.BeFalse(), "the nodes added at 1m have run 61s of the 2m duration")
	res = r.at(t, 3*time.Minute+time.Second, nil)
	g.Expect(res.Promote).To(gomega.BeTrue(), "every canary node has run the duration")
}
