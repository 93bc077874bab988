package notify

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

var (
	slow  = &v1alpha1.CanaryWebhook{Name: "slow", Type: v1alpha1.WebhookConfirmStart}
	quick = &v1alpha1.CanaryWebhook{Name: "quick", Type: v1alpha1.WebhookConfirmStart}
	a, b  = types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}
)

// hanging answers every webhook at once but the one named slow, which
// hangs until its context ends; it counts its calls.
func hanging(calls *atomic.Int32) Deliver {
	return func(ctx context.Context, d Delivery) Answer {
		calls.Add(1)
		if d.Webhook.Name == slow.Name {
			<-ctx.Done()
			return Answer{Failed: true, Reason: "timed out"}
		}
		return Answer{OK: true}
	}
}

func started(t *testing.T, n *Notifier) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = n.Start(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// A gate whose receiver hangs costs only itself: another ExtendedDaemonSet's
// gate is answered and requeued meanwhile, and the hanging gate, asked
// again and again, has one ask in flight.
func TestHangingGateDelaysNoOther(t *testing.T) {
	g := gomega.NewWithT(t)
	var calls atomic.Int32
	n := New(hanging(&calls), Options{Workers: 2})
	started(t, n)
	now := time.Now()
	for range 5 {
		n.Ask(a, "i1", GateKey{Name: slow.Name, Type: slow.Type}, time.Second, Delivery{EDS: a, Webhook: slow}, now)
	}
	n.Ask(b, "i1", GateKey{Name: quick.Name, Type: quick.Type}, time.Second, Delivery{EDS: b, Webhook: quick}, now)
	var requeued event.GenericEvent
	g.Eventually(n.Requeues()).Should(gomega.Receive(&requeued))
	g.Expect(requeued.Object.GetName()).To(gomega.Equal(b.Name), "the answered gate's ExtendedDaemonSet is requeued")
	g.Expect(n.Answers(b, "i1")).To(gomega.HaveKeyWithValue(GateKey{Name: quick.Name, Type: quick.Type}, Answer{OK: true}))
	g.Expect(n.Answers(a, "i1")).To(gomega.BeEmpty())
	g.Consistently(calls.Load, 200*time.Millisecond).Should(gomega.BeEquivalentTo(2), "one ask in flight per gate")
}

// An answer is asked again only once its interval has passed, and the
// answers of another instance are forgotten.
func TestGateAskedAgainOnItsInterval(t *testing.T) {
	g := gomega.NewWithT(t)
	var calls atomic.Int32
	n := New(hanging(&calls), Options{})
	started(t, n)
	key, now := GateKey{Name: quick.Name, Type: quick.Type}, time.Now()
	n.Ask(a, "i1", key, time.Minute, Delivery{EDS: a, Webhook: quick}, now)
	g.Eventually(func() map[GateKey]Answer { return n.Answers(a, "i1") }).Should(gomega.HaveLen(1))
	n.Ask(a, "i1", key, time.Minute, Delivery{EDS: a, Webhook: quick}, now.Add(30*time.Second))
	g.Consistently(calls.Load, 100*time.Millisecond).Should(gomega.BeEquivalentTo(1))
	n.Ask(a, "i1", key, time.Minute, Delivery{EDS: a, Webhook: quick}, now.Add(2*time.Minute))
	g.Eventually(calls.Load).Should(gomega.BeEquivalentTo(2))
	g.Expect(n.Answers(a, "i2")).To(gomega.BeEmpty())
	g.Expect(n.Answers(a, "i1")).To(gomega.BeEmpty(), "asking for i2 forgot i1")
}

// Notifications to a receiver that hangs pile up in its own queue, are
// dropped and counted past its size, and never delay another receiver's.
func TestNotificationQueuesArePerReceiverAndBounded(t *testing.T) {
	g := gomega.NewWithT(t)
	var calls atomic.Int32
	n := New(hanging(&calls), Options{QueueSize: 2})
	slowEvent := &v1alpha1.CanaryWebhook{Name: slow.Name, Type: v1alpha1.WebhookEvent}
	quickEvent := &v1alpha1.CanaryWebhook{Name: quick.Name, Type: v1alpha1.WebhookEvent}
	dropped := func() float64 {
		return testutil.ToFloat64(deliveries().deliveries.WithLabelValues(a.Namespace, a.Name, "event", outcomeDropped))
	}
	before := dropped()
	for range 3 {
		n.Tell(a, Delivery{EDS: a, Webhook: slowEvent})
	}
	g.Expect(dropped()-before).To(gomega.BeEquivalentTo(1), "a full queue drops, counted")
	g.Expect(calls.Load()).To(gomega.BeZero(), "nothing is sent before Start: only the leader sends")
	started(t, n)
	for range 2 {
		n.Tell(a, Delivery{EDS: a, Webhook: quickEvent})
	}
	g.Eventually(calls.Load).Should(gomega.BeEquivalentTo(3), "the quick receiver's two, while the slow one hangs on its first")
}
