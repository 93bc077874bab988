package canary

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// gated is a two-step canary (1 node for 1m, then 2 nodes for 1m) with a
// webhook of each given type, named after it.
func gated(types ...v1alpha1.CanaryWebhookType) *v1alpha1.CanaryStrategy {
	s := &v1alpha1.CanaryStrategy{Steps: []v1alpha1.CanaryStep{timed(intstr.FromInt32(1), time.Minute), timed(intstr.FromInt32(2), time.Minute)}}
	for _, t := range types {
		s.Webhooks = append(s.Webhooks, v1alpha1.CanaryWebhook{Name: string(t), Type: t, WebRequest: v1alpha1.WebRequest{URL: "https://hooks.example/" + string(t)}})
	}
	return s
}

func point(t v1alpha1.CanaryWebhookType, step int32) GatePoint {
	return GatePoint{Name: string(t), Type: t, Step: step}
}

func pass(points ...GatePoint) map[GatePoint]GateAnswer {
	out := map[GatePoint]GateAnswer{}
	for _, p := range points {
		out[p] = GateAnswer{Passed: true}
	}
	return out
}

// Each gate holds the canary where it stands, asks its receiver, and lets
// it go on once it answered 2xx; the hold is told in the status.
func TestGatesHoldUntilTheyPass(t *testing.T) {
	cases := []struct {
		name string
		typ  v1alpha1.CanaryWebhookType
		// reach is how long the canary runs (answering the other gates)
		// before it stands at the gate.
		reach time.Duration
		at    GatePoint
		// held checks the canary while the gate holds it.
		held func(g gomega.Gomega, res Result)
		// passed checks the canary once the gate answered 2xx.
		passed func(g gomega.Gomega, res Result)
	}{
		{
			name: "confirm-start holds before any node is picked", typ: v1alpha1.WebhookConfirmStart, at: point(v1alpha1.WebhookConfirmStart, 0),
			held: func(g gomega.Gomega, res Result) {
				g.Expect(res.Status.Nodes).To(gomega.BeEmpty(), "no node, so no canary pod")
			},
			passed: func(g gomega.Gomega, res Result) {
				g.Expect(res.Status.Nodes).To(gomega.HaveLen(1))
			},
		},
		{
			name: "confirm-step holds before step 2", typ: v1alpha1.WebhookConfirmStep, reach: time.Minute, at: point(v1alpha1.WebhookConfirmStep, 2),
			held: func(g gomega.Gomega, res Result) {
				g.Expect(res.Status.Step).To(gomega.BeEquivalentTo(1))
				g.Expect(res.Status.Nodes).To(gomega.HaveLen(1), "no new node while the gate holds")
			},
			passed: func(g gomega.Gomega, res Result) {
				g.Expect(res.Status.Step).To(gomega.BeEquivalentTo(2))
				g.Expect(res.Transition).To(gomega.Equal(StepStarted))
			},
		},
		{
			name: "confirm-promotion holds after the last step", typ: v1alpha1.WebhookConfirmPromotion, reach: 2 * time.Minute, at: point(v1alpha1.WebhookConfirmPromotion, 0),
			held: func(g gomega.Gomega, res Result) {
				g.Expect(res.Status.Step).To(gomega.BeEquivalentTo(2))
				g.Expect(res.Promote).To(gomega.BeFalse())
			},
			passed: func(g gomega.Gomega, res Result) {
				g.Expect(res.Promote).To(gomega.BeTrue())
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			r := newRun(gated(tc.typ), 4)
			r.at(t, 0, nil)
			if tc.reach > 0 {
				r.at(t, tc.reach/2, nil)
				r.at(t, tc.reach, nil)
			}
			res := r.at(t, tc.reach+time.Second, nil)
			g.Expect(res.Status.Reason).To(gomega.Equal(v1alpha1.ReasonWaitingForGate))
			g.Expect(res.Status.Message).To(gomega.ContainSubstring("waiting for gate " + tc.at.Name))
			g.Expect(res.Asks).To(gomega.ConsistOf(gomega.HaveField("Point", tc.at)))
			g.Expect(res.RequeueAfter).To(gomega.Equal(30*time.Second), "asks again on the default interval")
			tc.held(g, res)

			r.in.Answers = map[GatePoint]GateAnswer{tc.at: {Answer: "503 Service Unavailable"}}
			res = r.at(t, tc.reach+time.Minute, nil)
			g.Expect(res.Status.Message).To(gomega.HaveSuffix("last answer: 503 Service Unavailable"))
			g.Expect(res.Status.Gates).To(gomega.ContainElement(gomega.And(
				gomega.HaveField("Name", tc.at.Name), gomega.HaveField("PassedAt", gomega.BeNil()),
				gomega.HaveField("Since.Time", start.Add(tc.reach)))), "the wait's start stays the first time it held")

			r.in.Answers = pass(tc.at)
			res = r.at(t, tc.reach+2*time.Minute, nil)
			g.Expect(res.Asks).To(gomega.BeEmpty())
			g.Expect(res.Status.Reason).NotTo(gomega.Equal(v1alpha1.ReasonWaitingForGate))
			tc.passed(g, res)
		})
	}
}

// A gate passed is recorded for its canary instance: its receiver is not
// asked again, even with its answer forgotten (a restart), but a retried
// canary, a new instance, asks again.
func TestPassedGateIsRecordedForItsInstance(t *testing.T) {
	g := gomega.NewWithT(t)
	r := newRun(gated(v1alpha1.WebhookConfirmStep), 4)
	r.in.Annotations = map[string]string{}
	r.at(t, 0, nil)
	r.at(t, time.Minute, nil)
	r.in.Answers = pass(point(v1alpha1.WebhookConfirmStep, 2))
	r.at(t, time.Minute+time.Second, nil)
	r.in.Answers = nil
	res := r.at(t, time.Minute+2*time.Second, nil)
	g.Expect(res.Status.Step).To(gomega.BeEquivalentTo(2))
	g.Expect(res.Asks).To(gomega.BeEmpty())

	r.in.Annotations[v1alpha1.CanaryFailedAnnotation] = res.Status.ReplicaSet + "@" + res.Status.Instance
	res = r.at(t, 2*time.Minute, nil)
	g.Expect(res.Status.Failed).To(gomega.BeTrue())
	r.in.Annotations[v1alpha1.CanaryRetryAnnotation] = "1"
	r.at(t, 3*time.Minute, nil)
	r.at(t, 4*time.Minute, nil)
	res = r.at(t, 4*time.Minute+time.Second, nil)
	g.Expect(res.Status.Reason).To(gomega.Equal(v1alpha1.ReasonWaitingForGate), "the retried canary asks again")
	g.Expect(res.Status.Step).To(gomega.BeEquivalentTo(1))
}

// A gate that waited its timeout fails the canary, or pauses it when
// onTimeout says Pause; a person's unpause then passes the gate. The
// timeout counts from the wait's start in status, whoever decides.
func TestGateTimeout(t *testing.T) {
	cases := []struct {
		name      string
		onTimeout v1alpha1.GateTimeoutAction
		failed    bool
		paused    bool
	}{
		{"Fail by default", "", true, false},
		{"Fail", v1alpha1.GateTimeoutFail, true, false},
		{"Pause", v1alpha1.GateTimeoutPause, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			s := gated(v1alpha1.WebhookConfirmStart)
			s.Webhooks[0].Timeout, s.Webhooks[0].OnTimeout = dur(10*time.Minute), tc.onTimeout
			r := newRun(s, 4)
			r.in.Annotations = map[string]string{}
			res := r.at(t, 0, nil)
			g.Expect(res.RequeueAfter).To(gomega.Equal(30 * time.Second))
			r.in.Answers = map[GatePoint]GateAnswer{point(v1alpha1.WebhookConfirmStart, 0): {Answer: "host not allowed"}}
			res = r.at(t, 9*time.Minute+50*time.Second, nil)
			g.Expect(res.RequeueAfter).To(gomega.Equal(10*time.Second), "wakes up at the timeout")
			g.Expect(res.Status.Failed || res.Status.Paused).To(gomega.BeFalse())

			res = r.at(t, 10*time.Minute, nil)
			g.Expect(res.Status.Failed).To(gomega.Equal(tc.failed))
			g.Expect(res.Status.Paused).To(gomega.Equal(tc.paused))
			g.Expect(res.Status.Reason).To(gomega.Equal(v1alpha1.ReasonGateTimedOut))
			g.Expect(res.Status.Message).To(gomega.ContainSubstring("last answer: host not allowed"))
			g.Expect(res.Status.Nodes).To(gomega.BeEmpty())
			if !tc.paused {
				return
			}
			r.in.Annotations[v1alpha1.CanaryUnpausedAnnotation] = res.Status.ReplicaSet + "@" + res.Status.Instance
			res = r.at(t, 11*time.Minute, nil)
			g.Expect(res.Status.Paused).To(gomega.BeFalse())
			g.Expect(res.Status.Nodes).To(gomega.HaveLen(1), "unpausing passed the gate")
		})
	}
}

// While a gate holds, the canary is still judged: canaryTimeout fails it.
func TestHeldCanaryIsStillJudged(t *testing.T) {
	g := gomega.NewWithT(t)
	s := gated(v1alpha1.WebhookConfirmPromotion)
	s.AutoFail = &v1alpha1.CanaryAutoFail{CanaryTimeout: dur(5 * time.Minute)}
	r := newRun(s, 4)
	r.at(t, 0, nil)
	r.at(t, time.Minute, nil)
	r.at(t, 2*time.Minute, nil)
	res := r.at(t, 2*time.Minute+time.Second, nil)
	g.Expect(res.Status.Reason).To(gomega.Equal(v1alpha1.ReasonWaitingForGate))
	res = r.at(t, 5*time.Minute+time.Second, nil)
	g.Expect(res.Status.Failed).To(gomega.BeTrue())
	g.Expect(res.Status.Reason).NotTo(gomega.Equal(v1alpha1.ReasonWaitingForGate))
}

// event and rollback webhooks never hold a canary.
func TestNotificationsDoNotHold(t *testing.T) {
	g := gomega.NewWithT(t)
	r := newRun(gated(v1alpha1.WebhookEvent, v1alpha1.WebhookRollback), 4)
	r.at(t, 0, nil)
	r.at(t, time.Minute, nil)
	res := r.at(t, time.Minute+time.Second, nil)
	g.Expect(res.Status.Step).To(gomega.BeEquivalentTo(2))
	g.Expect(res.Asks).To(gomega.BeEmpty())
	g.Expect(res.Status.Gates).To(gomega.BeEmpty())
}
