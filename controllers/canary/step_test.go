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

// stepInput is a canary of replica set "rs-2" on three candidate nodes,
// started at start and observed after d, all its pods ready.
func stepInput(d time.Duration, strategy *v1alpha1.CanaryStrategy) Input {
	return Input{
		Strategy:   strategy,
		Status:     &v1alpha1.CanaryStatus{ReplicaSet: "rs-2", StartedAt: &metav1.Time{Time: start}, Nodes: []string{"node-01"}},
		ReplicaSet: "rs-2", TemplateHash: "h2",
		Candidates: zoned(3, "a"), Desired: 3,
		Pods:  []*corev1.Pod{canaryPod("rs-2-x")},
		Ready: true,
		Now:   start.Add(d),
	}
}

func TestStepStartsACanaryOnNewNodes(t *testing.T) {
	g := gomega.NewWithT(t)
	in := stepInput(0, &v1alpha1.CanaryStrategy{Replicas: ptr.To(intstr.FromInt32(2))})
	in.Status = &v1alpha1.CanaryStatus{ReplicaSet: "rs-1", Failed: true} // an older canary
	res, err := Step(in)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res.Transition).To(gomega.Equal(Started))
	g.Expect(res.Status.ReplicaSet).To(gomega.Equal("rs-2"))
	g.Expect(res.Status.Failed).To(gomega.BeFalse())
	g.Expect(res.Status.StartedAt.Time).To(gomega.Equal(in.Now))
	g.Expect(res.Status.Nodes).To(gomega.Equal([]string{"node-00", "node-01"}))
	g.Expect(res.Promote).To(gomega.BeFalse())
	g.Expect(res.RequeueAfter).To(gomega.Equal(defaultDuration), "an auto canary waits for its duration (10m unset)")
}

func TestStepAutoPromotion(t *testing.T) {
	auto := &v1alpha1.CanaryStrategy{Duration: dur(10 * time.Minute), NoRestartsDuration: dur(5 * time.Minute)}
	restartedAt := func(ago time.Duration, now time.Duration) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].RestartCount = 1
			p.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{
				FinishedAt: metav1.NewTime(start.Add(now - ago))}
		}
	}
	cases := []struct {
		name    string
		after   time.Duration
		mutate  func(*Input)
		promote bool
		requeue time.Duration
		reason  string
	}{
		{"before the duration", 4 * time.Minute, nil, false, 6 * time.Minute, ""},
		{"after the duration", 10 * time.Minute, nil, true, 0, ""},
		{"a recent restart pushes promotion back", 11 * time.Minute, func(in *Input) {
			in.Pods = []*corev1.Pod{canaryPod("rs-2-x", restartedAt(time.Minute, 11*time.Minute))}
		}, false, 4 * time.Minute, ""},
		{"an old restart does not", 11 * time.Minute, func(in *Input) {
			in.Pods = []*corev1.Pod{canaryPod("rs-2-x", restartedAt(6*time.Minute, 11*time.Minute))}
		}, true, 0, ""},
		{"not every canary pod is available yet", 11 * time.Minute, func(in *Input) { in.Ready = false }, false, 0, "WaitingForPods"},
		{"paused by the spec", 11 * time.Minute, func(in *Input) {
			s := *in.Strategy
			s.Paused = true
			in.Strategy = &s
		}, false, 0, "PausedByUser"},
		{"paused by the annotation", 11 * time.Minute, func(in *Input) {
			in.Annotations = map[string]string{v1alpha1.CanaryPausedAnnotation: "true"}
		}, false, 0, "PausedByUser"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			in := stepInput(tc.after, auto)
			if tc.mutate != nil {
				tc.mutate(&in)
			}
			res, err := Step(in)
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(res.Promote).To(gomega.Equal(tc.promote))
			g.Expect(res.RequeueAfter).To(gomega.Equal(tc.requeue))
			g.Expect(res.Status.Reason).To(gomega.Equal(tc.reason))
			if tc.promote {
				g.Expect(res.Transition).To(gomega.Equal(Promoted))
			}
		})
	}
}

func TestStepManualControls(t *testing.T) {
	manual := &v1alpha1.CanaryStrategy{ValidationMode: v1alpha1.CanaryValidationManual,
		AutoPause: &v1alpha1.CanaryAutoPause{MaxRestarts: ptr.To[int32](1)},
		AutoFail:  &v1alpha1.CanaryAutoFail{CanaryTimeout: dur(time.Hour)}}
	crashing := []*corev1.Pod{canaryPod("rs-2-x", restarts(2, "CrashLoopBackOff", ""))}
	cases := []struct {
		name       string
		spec       func(*v1alpha1.CanaryStrategy)
		ann        map[string]string
		pods       []*corev1.Pod
		promote    bool
		failed     bool
		paused     bool
		reason     string
		transition string
	}{
		{name: "manual waits for validation", paused: true, reason: "WaitingForValidation"},
		{name: "validated by annotation", ann: map[string]string{v1alpha1.CanaryValidatedAnnotation: "rs-2"}, promote: true, transition: Promoted},
		{name: "validated by spec", spec: func(s *v1alpha1.CanaryStrategy) { s.Validate = "rs-2" }, promote: true, transition: Promoted},
		{name: "a validation of another canary is ignored", spec: func(s *v1alpha1.CanaryStrategy) { s.Validate = "rs-1" }, paused: true, reason: "WaitingForValidation"},
		{name: "failed by annotation", ann: map[string]string{v1alpha1.CanaryFailedAnnotation: "rs-2"}, failed: true, reason: ReasonManual, transition: Failed},
		{name: "failed by spec, even when validated", spec: func(s *v1alpha1.CanaryStrategy) { s.Fail, s.Validate = "rs-2", "rs-2" }, failed: true, reason: ReasonManual, transition: Failed},
		{name: "auto-paused by restarts", pods: crashing, paused: true, reason: "CrashLoopBackOff", transition: Paused},
		{name: "unpaused for this canary", pods: crashing, ann: map[string]string{v1alpha1.CanaryUnpausedAnnotation: "rs-2"}, paused: true, reason: "WaitingForValidation"},
		{name: "unpaused by spec for this canary", pods: crashing, spec: func(s *v1alpha1.CanaryStrategy) { s.Unpause = "rs-2" }, paused: true, reason: "WaitingForValidation"},
		{name: "an unpause of another canary is ignored", pods: crashing, spec: func(s *v1alpha1.CanaryStrategy) { s.Unpause = "rs-1" }, paused: true, reason: "CrashLoopBackOff", transition: Paused},
		{name: "a person's pause holds a crashing canary: no auto-fail", spec: func(s *v1alpha1.CanaryStrategy) {
			s.Paused = true
			s.AutoFail = &v1alpha1.CanaryAutoFail{MaxRestarts: ptr.To[int32](1), CanaryTimeout: dur(time.Hour)}
		}, pods: crashing, paused: true, reason: "PausedByUser", transition: Paused},
		{name: "validation promotes a paused canary", pods: crashing, ann: map[string]string{v1alpha1.CanaryValidatedAnnotation: "rs-2"}, promote: true, transition: Promoted},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			strategy := *manual
			if tc.spec != nil {
				tc.spec(&strategy)
			}
			in := stepInput(2*time.Minute, &strategy)
			in.Annotations = tc.ann
			if tc.pods != nil {
				in.Pods = tc.pods
			}
			res := expectOutcome(g, in, outcome{tc.promote, tc.failed, tc.paused, tc.reason, tc.transition})
			if tc.paused || tc.reason == "WaitingForValidation" {
				g.Expect(res.RequeueAfter).To(gomega.Equal(58*time.Minute+time.Second), "wakes up for canaryTimeout")
			}
		})
	}
}

func TestStepFailedCanaryStaysFailedUntilRetried(t *testing.T) {
	g := gomega.NewWithT(t)
	in := stepInput(time.Hour, &v1alpha1.CanaryStrategy{Duration: dur(time.Minute)})
	in.Status.Failed, in.Status.Reason = true, "CrashLoopBackOff"
	res, err := Step(in)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res.Status.Failed).To(gomega.BeTrue(), "never promoted once failed")
	g.Expect(res.Promote).To(gomega.BeFalse())
	g.Expect(res.Transition).To(gomega.BeEmpty())

	in.Annotations = map[string]string{v1alpha1.CanaryRetryAnnotation: "1"}
	res, err = Step(in)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res.Transition).To(gomega.Equal(Retried))
	g.Expect(res.Status.Failed).To(gomega.BeFalse())
	g.Expect(res.Status.StartedAt.Time).To(gomega.Equal(in.Now), "a retried canary runs its whole duration again")
	g.Expect(res.LastHandledRetry).To(gomega.Equal("/1"))

	// The same token again is no new retry.
	in.LastHandledRetry = res.LastHandledRetry
	res, err = Step(in)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res.Status.Failed).To(gomega.BeTrue())
}

func TestStepFailsOnCanaryTimeoutAndAutoFail(t *testing.T) {
	g := gomega.NewWithT(t)
	in := stepInput(2*time.Hour, &v1alpha1.CanaryStrategy{ValidationMode: v1alpha1.CanaryValidationManual,
		AutoFail: &v1alpha1.CanaryAutoFail{CanaryTimeout: dur(time.Hour)}})
	res, err := Step(in)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res.Status.Failed).To(gomega.BeTrue())
	g.Expect(res.Status.Reason).To(gomega.Equal(ReasonTimeoutExceeded))
	g.Expect(res.Transition).To(gomega.Equal(Failed))
}

func TestStepReplacesAVanishedCanaryNode(t *testing.T) {
	g := gomega.NewWithT(t)
	in := stepInput(time.Minute, &v1alpha1.CanaryStrategy{})
	in.Status.Nodes = []string{"node-09"} // no longer a candidate
	res, err := Step(in)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res.Status.Nodes).To(gomega.Equal([]string{"node-00"}))
	g.Expect(res.Transition).To(gomega.BeEmpty(), "the same canary goes on")
}

// outcome is what a step is expected to decide.
type outcome struct {
	promote, failed, paused bool
	reason, transition      string
}

// expectOutcome runs one step and checks its decision; the reason is
// checked unless the canary was promoted, which clears its status.
func expectOutcome(g gomega.Gomega, in Input, want outcome) Result {
	res, err := Step(in)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res.Promote).To(gomega.Equal(want.promote))
	g.Expect(res.Status.Failed).To(gomega.Equal(want.failed))
	g.Expect(res.Status.Paused).To(gomega.Equal(want.paused))
	g.Expect(res.Transition).To(gomega.Equal(want.transition))
	if !want.promote {
		g.Expect(res.Status.Reason).To(gomega.Equal(want.reason))
	}
	return res
}

// A canary node cordoned (a drain does not evict node agents) keeps its
// canary; a NotReady one is another matter (node_readiness_test.go).
func TestStepKeepsItsCordonedNodeButStartsOnHealthyNodes(t *testing.T) {
	g := gomega.NewWithT(t)
	in := stepInput(time.Minute, &v1alpha1.CanaryStrategy{})
	in.Candidates[1].Unhealthy = "the node is cordoned" // node-01, the canary's node
	res, err := Step(in)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res.Status.Nodes).To(gomega.Equal([]string{"node-01"}), "the running canary keeps its node")

	// A canary of a newer template starts afresh, on healthy nodes only.
	in.ReplicaSet = "rs-3"
	in.Candidates[0].Unhealthy = "cordoned"
	res, err = Step(in)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res.Transition).To(gomega.Equal(Started))
	g.Expect(res.Status.Nodes).To(gomega.Equal([]string{"node-02"}))
}

// TestStepRetryTokenSetBeforeTheFailureRetriesNothing: a token present
// while the canary runs cannot ask to retry a failure yet to come, so only
// a token changed after the failure retries it.
func TestStepRetryTokenSetBeforeTheFailureRetriesNothing(t *testing.T) {
	g := gomega.NewWithT(t)
	in := stepInput(time.Minute, &v1alpha1.CanaryStrategy{Retry: "a"})
	res := expectOutcome(g, in, outcome{})
	g.Expect(res.LastHandledRetry).To(gomega.Equal("a/"), "seen while running: handled")

	in.LastHandledRetry, in.Status = res.LastHandledRetry, res.Status
	in.Annotations = map[string]string{v1alpha1.CanaryFailedAnnotation: "rs-2"}
	res = expectOutcome(g, in, outcome{failed: true, reason: ReasonManual, transition: Failed})

	in.LastHandledRetry, in.Status, in.Annotations = res.LastHandledRetry, res.Status, nil
	res = expectOutcome(g, in, outcome{failed: true, reason: ReasonManual})
	g.Expect(res.LastHandledRetry).To(gomega.Equal("a/"))

	in.Strategy.Retry = "b"
	res = expectOutcome(g, in, outcome{transition: Retried})
	g.Expect(res.LastHandledRetry).To(gomega.Equal("b/"))
}

// TestStepRetryTokenSetWithTheFailureIsHandled: a canary that fails in the
// step that first sees a token is not retried by it afterwards.
func TestStepRetryTokenSetWithTheFailureIsHandled(t *testing.T) {
	g := gomega.NewWithT(t)
	in := stepInput(time.Minute, &v1alpha1.CanaryStrategy{})
	in.Annotations = map[string]string{v1alpha1.CanaryRetryAnnotation: "a", v1alpha1.CanaryFailedAnnotation: "rs-2"}
	res := expectOutcome(g, in, outcome{failed: true, reason: ReasonManual, transition: Failed})
	g.Expect(res.LastHandledRetry).To(gomega.Equal("/a"))

	in.LastHandledRetry, in.Status = res.LastHandledRetry, res.Status
	delete(in.Annotations, v1alpha1.CanaryFailedAnnotation)
	expectOutcome(g, in, outcome{failed: true, reason: ReasonManual})
}

// TestStepRetryTokenOfAnOlderCanaryIsHandled: a token left from an earlier
// canary does not retry the next canary's failure.
func TestStepRetryTokenOfAnOlderCanaryIsHandled(t *testing.T) {
	g := gomega.NewWithT(t)
	in := stepInput(0, &v1alpha1.CanaryStrategy{Retry: "a"})
	in.Status = &v1alpha1.CanaryStatus{ReplicaSet: "rs-1", Failed: true}
	res := expectOutcome(g, in, outcome{transition: Started})
	g.Expect(res.LastHandledRetry).To(gomega.Equal("a/"))
}

// A canary without a healthy node says so and looks again, and is never
// promoted.
func TestStepWithoutAHealthyNodeWaitsAndSaysWhy(t *testing.T) {
	g := gomega.NewWithT(t)
	in := stepInput(time.Hour, &v1alpha1.CanaryStrategy{})
	in.Status = nil
	for i := range in.Candidates {
		in.Candidates[i].Unhealthy = "cordoned"
	}
	res, err := Step(in)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res.Promote).To(gomega.BeFalse())
	g.Expect(res.Status.Nodes).To(gomega.BeEmpty())
	g.Expect(res.Status.Reason).To(gomega.Equal(ReasonWaitingForNodes))
	g.Expect(res.RequeueAfter).To(gomega.Equal(nodesPoll))
}
