package controllers

// Pure tests: run them with -short (TestMain starts envtest otherwise).

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/notify"
)

// sent records what a started notifier delivered, by webhook name.
type sent struct {
	mu sync.Mutex
	by map[string][]map[string]any
}

func (s *sent) deliver(_ context.Context, d notify.Delivery) notify.Answer {
	var body map[string]any
	_ = json.Unmarshal(d.Body, &body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.by[d.Webhook.Name] = append(s.by[d.Webhook.Name], body)
	return notify.Answer{Reason: "answered 503"}
}

func (s *sent) to(name string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.by[name]
}

func webhooksReconciler(t *testing.T) (*ExtendedDaemonSetReconciler, *sent) {
	s := &sent{by: map[string][]map[string]any{}}
	n := notify.New(s.deliver, notify.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = n.Start(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return &ExtendedDaemonSetReconciler{Webhooks: n}, s
}

func hooked(hooks ...v1alpha1.CanaryWebhook) *v1alpha1.ExtendedDaemonSet {
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "agent", UID: "u1"}}
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{Webhooks: hooks}
	eds.Status.ActiveReplicaSet = "agent-a"
	return eds
}

// A failed canary is told to the event and the rollback webhooks, once
// its status is written; the gates it waits at are asked.
func TestSendWebhooksTellsTransitionsAndAsksGates(t *testing.T) {
	g := gomega.NewWithT(t)
	r, s := webhooksReconciler(t)
	hooks := []v1alpha1.CanaryWebhook{
		{Name: "chat", Type: v1alpha1.WebhookEvent}, {Name: "pager", Type: v1alpha1.WebhookRollback},
		{Name: "smoke", Type: v1alpha1.WebhookConfirmPromotion},
	}
	before, after := hooked(hooks...), hooked(hooks...)
	failed := &v1alpha1.CanaryStatus{ReplicaSet: "agent-b", Instance: "i1", Failed: true, Reason: "CrashLoopBackOff", Message: "agent restarted"}
	r.sendWebhooks(before, after, edsObservation{now: benchNow, canaryNote: &canaryNote{transition: canary.Failed, canary: failed}})
	g.Eventually(func() []map[string]any { return s.to("chat") }).Should(gomega.ConsistOf(
		gomega.HaveKeyWithValue("transition", gomega.And(gomega.HaveKeyWithValue("reason", canary.Failed), gomega.HaveKeyWithValue("webhook", "event"),
			gomega.HaveKeyWithValue("message", "CrashLoopBackOff: agent restarted")))))
	g.Eventually(func() []map[string]any { return s.to("pager") }).Should(gomega.ConsistOf(
		gomega.HaveKeyWithValue("transition", gomega.HaveKeyWithValue("reason", canary.Failed))))
	g.Consistently(func() []map[string]any { return s.to("smoke") }, 100*time.Millisecond).Should(gomega.BeEmpty(), "no gate was asked for")

	waiting := &v1alpha1.CanaryStatus{ReplicaSet: "agent-b", Instance: "i2", Reason: v1alpha1.ReasonWaitingForGate, Message: "waiting for gate smoke"}
	ask := canary.GateAsk{Point: canary.GatePoint{Name: "smoke", Type: v1alpha1.WebhookConfirmPromotion}, Webhook: &hooks[2], Interval: time.Minute}
	r.sendWebhooks(before, after, edsObservation{now: benchNow, canaryNote: &canaryNote{canary: waiting, asks: []canary.GateAsk{ask}}})
	g.Eventually(func() []map[string]any { return s.to("smoke") }).Should(gomega.ConsistOf(gomega.HaveKeyWithValue("transition",
		gomega.HaveKeyWithValue("gate", gomega.HaveKeyWithValue("type", "confirm-promotion")))))
	g.Eventually(func() map[notify.GateKey]notify.Answer {
		return r.Webhooks.Answers(client.ObjectKeyFromObject(after), "i2")
	}).Should(
		gomega.HaveKeyWithValue(notify.GateKey{Name: "smoke", Type: v1alpha1.WebhookConfirmPromotion}, notify.Answer{Reason: "answered 503"}))
	g.Expect(r.gateAnswers(withCanary(after, waiting), "agent-b")).To(gomega.HaveKeyWithValue(ask.Point, canary.GateAnswer{Answer: "answered 503"}))
}

// The wait of a gate that passed is observed once, when it passes.
func TestGateWaitIsObservedWhenItPasses(t *testing.T) {
	g := gomega.NewWithT(t)
	since := metav1.NewTime(benchNow.Add(-90 * time.Second))
	read := &v1alpha1.CanaryStatus{ReplicaSet: "agent-b", Instance: "i1", Gates: []v1alpha1.CanaryGateStatus{
		{Name: "window", Type: v1alpha1.WebhookConfirmStep, Step: 2, Since: since},
	}}
	decided := read.DeepCopy()
	decided.Gates[0].PassedAt = &metav1.Time{Time: benchNow}
	strategy := &v1alpha1.CanaryStrategy{Webhooks: []v1alpha1.CanaryWebhook{{Name: "window", Type: v1alpha1.WebhookConfirmStep}}}
	count := func() (uint64, float64) {
		h := gateWaitHistogram(t, "confirm-step")
		return h.GetSampleCount(), h.GetSampleSum()
	}
	n0, sum0 := count()
	eds := types.NamespacedName{Namespace: "ns", Name: "agent"}
	observeGateWaits(eds, read, decided, strategy, benchNow)
	observeGateWaits(eds, decided, decided, strategy, benchNow)
	n, sum := count()
	g.Expect(n - n0).To(gomega.BeEquivalentTo(1))
	g.Expect(sum - sum0).To(gomega.BeNumerically("~", 90, 0.001))
}

func gateWaitHistogram(t *testing.T, typ string) *dto.Histogram {
	t.Helper()
	families, err := ctrlmetrics.Registry.(prometheus.Gatherer).Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "extendeddaemonset_gate_wait_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "type" && l.GetValue() == typ {
					return m.GetHistogram()
				}
			}
		}
	}
	return &dto.Histogram{}
}

func withCanary(eds *v1alpha1.ExtendedDaemonSet, c *v1alpha1.CanaryStatus) *v1alpha1.ExtendedDaemonSet {
	out := eds.DeepCopy()
	out.Status.Canary = c
	return out
}
