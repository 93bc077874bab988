package canary

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

var gateNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// zones are the active replica set's domains a, b and c: a done, b
// waiting for its turn (Pending, as the planner holds it at its gates).
func zones() []v1alpha1.DomainStatus {
	return []v1alpha1.DomainStatus{
		{Name: "a", State: v1alpha1.DomainDone}, {Name: "b", State: v1alpha1.DomainPending}, {Name: "c", State: v1alpha1.DomainPending},
	}
}

// domainGateIn is the decision's input for replica set rs-2 rolling out
// zones, with a confirm-step webhook that does onTimeout after 10m.
func domainGateIn(onTimeout v1alpha1.GateTimeoutAction) DomainGateInput {
	s := gated(v1alpha1.WebhookConfirmStep, v1alpha1.WebhookEvent)
	s.Webhooks[0].Timeout, s.Webhooks[0].OnTimeout = &metav1.Duration{Duration: 10 * time.Minute}, onTimeout
	return DomainGateInput{Strategy: s, Sequential: true, ReplicaSet: "rs-2", Domains: zones(), Now: gateNow}
}

// waitingSince is a record of rs-2 whose gate before domain b has waited
// since since, with the gates before a passed.
func waitingSince(since time.Duration) *v1alpha1.DomainGateStatus {
	return &v1alpha1.DomainGateStatus{ReplicaSet: "rs-2", Domain: "b", PassedThrough: "a", Gates: []v1alpha1.CanaryGateStatus{
		{Name: "confirm-step", Type: v1alpha1.WebhookConfirmStep, Since: metav1.NewTime(gateNow.Add(-since))},
	}}
}

func TestDomainGates(t *testing.T) {
	stepGate := point(v1alpha1.WebhookConfirmStep, 0)
	cases := []struct {
		name   string
		in     func(in *DomainGateInput)
		expect func(g gomega.Gomega, d DomainGateDecision)
	}{
		{
			name: "the domain after a done one is held, its gate asked, its wait recorded",
			expect: func(g gomega.Gomega, d DomainGateDecision) {
				g.Expect(d.Status).To(gomega.Equal(&v1alpha1.DomainGateStatus{ReplicaSet: "rs-2", Domain: "b", Gates: []v1alpha1.CanaryGateStatus{
					{Name: "confirm-step", Type: v1alpha1.WebhookConfirmStep, Since: metav1.NewTime(gateNow)},
				}}))
				g.Expect(d.Asks).To(gomega.ConsistOf(gomega.HaveField("Point", stepGate)))
				g.Expect(d.Domain).To(gomega.Equal("b"))
				g.Expect(d.Message).To(gomega.Equal("waiting for gate confirm-step (confirm-step) before domain b since 2026-01-02T03:04:05Z"))
				g.Expect(d.RequeueAfter).To(gomega.Equal(30 * time.Second))
			},
		},
		{
			name: "a gate that answered not 2xx still holds, its answer told",
			in: func(in *DomainGateInput) {
				in.Status = waitingSince(time.Minute)
				in.Answers = map[GatePoint]GateAnswer{stepGate: {Answer: "answered 503"}}
			},
			expect: func(g gomega.Gomega, d DomainGateDecision) {
				g.Expect(d.Status.PassedThrough).To(gomega.Equal("a"))
				g.Expect(d.Asks).To(gomega.HaveLen(1))
				g.Expect(d.Message).To(gomega.HaveSuffix("since 2026-01-02T03:03:05Z; last answer: answered 503"))
			},
		},
		{
			name: "a gate that answered 2xx passes the domain, asked no more",
			in: func(in *DomainGateInput) {
				in.Status, in.Answers = waitingSince(time.Minute), pass(stepGate)
			},
			expect: func(g gomega.Gomega, d DomainGateDecision) {
				g.Expect(d.Status.PassedThrough).To(gomega.Equal("b"))
				g.Expect(d.Status.Gates[0].PassedAt).To(gomega.Equal(&metav1.Time{Time: gateNow}))
				g.Expect(d.Asks).To(gomega.BeEmpty())
				g.Expect(d.Message).To(gomega.BeEmpty())
			},
		},
		{
			name: "a passed gate is not asked again while its domain rolls out",
			in: func(in *DomainGateInput) {
				in.Status = waitingSince(time.Minute)
				in.Status.PassedThrough = "b"
				in.Domains[1].State = v1alpha1.DomainUpdating
			},
			expect: func(g gomega.Gomega, d DomainGateDecision) {
				kept := waitingSince(time.Minute)
				kept.PassedThrough = "b"
				g.Expect(d.Status).To(gomega.Equal(kept))
				g.Expect(d.Asks).To(gomega.BeEmpty())
				g.Expect(d.Message).To(gomega.BeEmpty())
			},
		},
		{
			name: "the next domain is asked again, from its own start",
			in: func(in *DomainGateInput) {
				in.Status = waitingSince(time.Hour)
				in.Status.PassedThrough = "b"
				in.Domains[1].State = v1alpha1.DomainDone
			},
			expect: func(g gomega.Gomega, d DomainGateDecision) {
				g.Expect(d.Status.Domain).To(gomega.Equal("c"))
				g.Expect(d.Status.Gates).To(gomega.ConsistOf(gomega.HaveField("Since", metav1.NewTime(gateNow))))
				g.Expect(d.Asks).To(gomega.HaveLen(1))
			},
		},
		{
			name: "a new rollout asks again",
			in: func(in *DomainGateInput) {
				in.Status = waitingSince(time.Minute)
				in.Status.PassedThrough, in.Status.ReplicaSet = "c", "rs-1"
			},
			expect: func(g gomega.Gomega, d DomainGateDecision) {
				g.Expect(d.Status.ReplicaSet).To(gomega.Equal("rs-2"))
				g.Expect(d.Status.PassedThrough).To(gomega.BeEmpty())
				g.Expect(d.Asks).To(gomega.HaveLen(1))
			},
		},
		{
			name: "past its timeout with onTimeout Fail, the rollout fails, the gate asked no more",
			in:   func(in *DomainGateInput) { in.Status = waitingSince(10 * time.Minute) },
			expect: func(g gomega.Gomega, d DomainGateDecision) {
				g.Expect(d.Verdict).To(gomega.Equal(Verdict{Action: Fail, Reason: v1alpha1.ReasonGateTimedOut,
					Message: "gate confirm-step (confirm-step) before domain b got no 2xx answer within its timeout of 10m0s"}))
				g.Expect(d.Asks).To(gomega.BeEmpty())
				g.Expect(d.Status.PassedThrough).To(gomega.Equal("a"))
			},
		},
		{
			name: "past its timeout with onTimeout Pause, the rollout pauses",
			in: func(in *DomainGateInput) {
				*in = domainGateIn(v1alpha1.GateTimeoutPause)
				in.Status = waitingSince(10 * time.Minute)
				// A bare replica set, left from its canary, is not meant for the gate.
				in.Annotations = map[string]string{SteerUnpause.Annotation(): "rs-2"}
			},
			expect: func(g gomega.Gomega, d DomainGateDecision) {
				g.Expect(d.Verdict.Action).To(gomega.Equal(Pause))
				g.Expect(d.Verdict.Message).To(gomega.HaveSuffix("; unpausing rs-2@b passes it"))
				g.Expect(d.Asks).To(gomega.BeEmpty())
			},
		},
		{
			name: "a paused gate passes once an unpause names the replica set and domain",
			in: func(in *DomainGateInput) {
				*in = domainGateIn(v1alpha1.GateTimeoutPause)
				in.Status = waitingSince(10 * time.Minute)
				in.Annotations = map[string]string{SteerUnpause.Annotation(): "rs-2@b"}
			},
			expect: func(g gomega.Gomega, d DomainGateDecision) {
				g.Expect(d.Verdict.Action).To(gomega.Equal(Continue))
				g.Expect(d.Status.PassedThrough).To(gomega.Equal("b"))
			},
		},
		{
			name: "the first domain has no gate",
			in: func(in *DomainGateInput) {
				in.Domains[0].State = v1alpha1.DomainPending
			},
			expect: func(g gomega.Gomega, d DomainGateDecision) {
				g.Expect(d.Status).To(gomega.BeNil())
				g.Expect(d.Asks).To(gomega.BeEmpty())
			},
		},
		{
			name: "a domain baking holds the next one, not a gate",
			in:   func(in *DomainGateInput) { in.Domains[0].State = v1alpha1.DomainBaking },
			expect: func(g gomega.Gomega, d DomainGateDecision) {
				g.Expect(d.Asks).To(gomega.BeEmpty())
			},
		},
		{
			name: "parallel domains have no gates, and the record is dropped",
			in: func(in *DomainGateInput) {
				in.Sequential, in.Status = false, waitingSince(time.Minute)
			},
			expect: func(g gomega.Gomega, d DomainGateDecision) {
				g.Expect(d).To(gomega.Equal(DomainGateDecision{}))
			},
		},
		{
			name: "without a confirm-step webhook nothing is asked",
			in: func(in *DomainGateInput) {
				in.Strategy = gated(v1alpha1.WebhookConfirmStart, v1alpha1.WebhookConfirmPromotion)
			},
			expect: func(g gomega.Gomega, d DomainGateDecision) {
				g.Expect(d).To(gomega.Equal(DomainGateDecision{}))
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := domainGateIn(v1alpha1.GateTimeoutFail)
			if c.in != nil {
				c.in(&in)
			}
			before := in.Status.DeepCopy()
			d := DomainGates(in)
			c.expect(gomega.NewWithT(t), d)
			gomega.NewWithT(t).Expect(in.Status).To(gomega.Equal(before), "the input is not written")
		})
	}
}

// The planner's input is the record of its own replica set alone.
func TestDomainGatePassedThrough(t *testing.T) {
	g := gomega.NewWithT(t)
	st := &v1alpha1.DomainGateStatus{ReplicaSet: "rs-2", PassedThrough: "b"}
	g.Expect(DomainGatePassedThrough(st, "rs-2")).To(gomega.Equal("b"))
	g.Expect(DomainGatePassedThrough(st, "rs-3")).To(gomega.BeEmpty())
	g.Expect(DomainGatePassedThrough(nil, "rs-2")).To(gomega.BeEmpty())
}
