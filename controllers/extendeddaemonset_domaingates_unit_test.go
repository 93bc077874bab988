package controllers

// Pure tests: run them with -short (TestMain starts envtest otherwise).

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/outcome"
)

// The gates before a domain are asked with the domain in the payload, as
// gates of their own in the notifier, whose answers are read back for
// that domain alone.
func TestDomainGatesAreAskedWithTheirDomain(t *testing.T) {
	g := gomega.NewWithT(t)
	r, s := webhooksReconciler(t)
	hooks := []v1alpha1.CanaryWebhook{{Name: "window", Type: v1alpha1.WebhookConfirmStep}}
	before, after := hooked(hooks...), hooked(hooks...)
	after.Status.DomainGate = &v1alpha1.DomainGateStatus{ReplicaSet: "agent-a", Domain: "zone-b"}
	ask := canary.GateAsk{Point: canary.GatePoint{Name: "window", Type: v1alpha1.WebhookConfirmStep}, Webhook: &hooks[0], Interval: time.Minute}
	d := canary.DomainGateDecision{Status: after.Status.DomainGate, Domain: "zone-b", Asks: []canary.GateAsk{ask},
		Message: "waiting for gate window (confirm-step) before domain zone-b"}
	r.sendWebhooks(before, after, edsObservation{now: benchNow, domainGate: d})
	g.Eventually(func() []map[string]any { return s.to("window") }).Should(gomega.ConsistOf(gomega.And(
		gomega.HaveKeyWithValue("domain", "zone-b"),
		gomega.HaveKeyWithValue("transition", gomega.And(gomega.HaveKeyWithValue("reason", v1alpha1.ReasonWaitingForGate),
			gomega.HaveKeyWithValue("gate", gomega.HaveKeyWithValue("type", "confirm-step")))))))
	key := client.ObjectKeyFromObject(after)
	g.Eventually(func() map[canary.GatePoint]canary.GateAnswer {
		return r.domainGateAnswers(key, after.Status.DomainGate, "agent-a")
	}).Should(gomega.HaveKeyWithValue(ask.Point, canary.GateAnswer{Answer: "answered 503"}))
	g.Expect(r.domainGateAnswers(key, after.Status.DomainGate, "agent-b")).To(gomega.BeEmpty(), "another rollout's record")
	other := &v1alpha1.DomainGateStatus{ReplicaSet: "agent-a", Domain: "zone-c"}
	g.Expect(r.domainGateAnswers(key, other, "agent-a")).To(gomega.BeEmpty(), "zone-b's answers are not zone-c's")
}

// A rollout held at the gates before a domain waits (Reconciling,
// WaitingForGate), is paused (Reconciling, CanaryPaused, which Argo CD
// reads as Suspended) or, past a timeout that fails, stalls.
func TestDomainGateProgress(t *testing.T) {
	eds := hooked()
	eds.Status.ActiveReplicaSet = "agent-b"
	cases := []struct {
		name string
		d    canary.DomainGateDecision
		want outcome.Progress
		ok   bool
	}{
		{name: "no gate holds a domain"},
		{
			name: "waiting", ok: true,
			d: canary.DomainGateDecision{Message: "waiting for gate window (confirm-step) before domain zone-b since 2026-01-01T00:00:00Z"},
			want: outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonWaitingForGate,
				Message: "rolling update of agent-b waiting for gate window (confirm-step) before domain zone-b since 2026-01-01T00:00:00Z"},
		},
		{
			name: "timed out, Fail", ok: true,
			d: canary.DomainGateDecision{Verdict: canary.Verdict{Action: canary.Fail, Reason: v1alpha1.ReasonGateTimedOut, Message: "gate window timed out"}},
			want: outcome.Progress{Phase: outcome.Stalled, Reason: v1alpha1.ReasonGateTimedOut,
				Message: "rolling update of agent-b stopped: gate window timed out; no further domain starts and nothing is rolled back until the template changes"},
		},
		{
			name: "timed out, Pause", ok: true,
			d: canary.DomainGateDecision{Verdict: canary.Verdict{Action: canary.Pause, Reason: v1alpha1.ReasonGateTimedOut, Message: "gate window timed out"}},
			want: outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonCanaryPaused,
				Message: "rolling update of agent-b paused: GateTimedOut: gate window timed out"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			got, ok := domainGateProgress(eds, c.d)
			g.Expect(ok).To(gomega.Equal(c.ok))
			g.Expect(got).To(gomega.Equal(c.want))
		})
	}
}

// The wait of a gate before a domain is observed once, when it passes.
func TestDomainGateWaitIsObservedWhenItPasses(t *testing.T) {
	g := gomega.NewWithT(t)
	hooks := []v1alpha1.CanaryWebhook{{Name: "window", Type: v1alpha1.WebhookConfirmStep}}
	before := hooked(hooks...)
	before.Status.DomainGate = &v1alpha1.DomainGateStatus{ReplicaSet: "agent-a", Domain: "zone-b", Gates: []v1alpha1.CanaryGateStatus{
		{Name: "window", Type: v1alpha1.WebhookConfirmStep, Since: metav1.NewTime(benchNow.Add(-2 * time.Minute))},
	}}
	after := before.DeepCopy()
	after.Status.DomainGate.Gates[0].PassedAt = &metav1.Time{Time: benchNow}
	count := func() (uint64, float64) {
		h := gateWaitHistogram(t, "confirm-step")
		return h.GetSampleCount(), h.GetSampleSum()
	}
	n0, sum0 := count()
	key := types.NamespacedName{Namespace: "ns", Name: "agent"}
	observeDomainGateWaits(key, before, after, after.Spec.Strategy.Canary, benchNow)
	observeDomainGateWaits(key, after, after, after.Spec.Strategy.Canary, benchNow)
	n, sum := count()
	g.Expect(n - n0).To(gomega.BeEquivalentTo(1))
	g.Expect(sum - sum0).To(gomega.BeNumerically("~", 120, 0.001))
}
