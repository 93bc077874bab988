package notify

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// Outcomes of a delivery, the outcome label of
// extendeddaemonset_webhook_deliveries_total.
const (
	// outcomeSuccess: the receiver answered 2xx.
	outcomeSuccess = "success"
	// outcomeRejected: the receiver answered, not 2xx (a gate that says
	// "not yet" counts here).
	outcomeRejected = "rejected"
	// outcomeError: no answer (refused host, connection error, timeout).
	outcomeError = "error"
	// outcomeDropped: not sent, its queue was full.
	outcomeDropped = "dropped"
)

func outcomeOf(a Answer) string {
	switch {
	case a.OK:
		return outcomeSuccess
	case a.Failed:
		return outcomeError
	}
	return outcomeRejected
}

// webhookMetrics are the deliveries of webhooks and the time canaries
// wait at gates.
type webhookMetrics struct {
	deliveries *prometheus.CounterVec
	gateWait   *prometheus.HistogramVec
}

// deliveries are registered once per process.
var deliveries = sync.OnceValue(func() *webhookMetrics {
	m := &webhookMetrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "extendeddaemonset_webhook_deliveries_total",
			Help: "Webhook deliveries of an ExtendedDaemonSet by webhook type and outcome: success (2xx), rejected (another status), error (no answer) or dropped (queue full).",
		}, []string{"namespace", "name", "type", "outcome"}),
		gateWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "extendeddaemonset_gate_wait_seconds",
			Help: "How long the canaries of an ExtendedDaemonSet waited at a gate, from the first ask to its pass or timeout, by webhook type.",
			// Seconds to the default timeout of an hour and beyond.
			Buckets: prometheus.ExponentialBuckets(1, 2, 14),
		}, []string{"namespace", "name", "type"}),
	}
	ctrlmetrics.Registry.MustRegister(m.deliveries, m.gateWait)
	return m
})

// outcomes are every outcome of a delivery.
var outcomes = []string{outcomeSuccess, outcomeRejected, outcomeError, outcomeDropped}

// start makes the series of every outcome of d's ExtendedDaemonSet and
// type exist from its first delivery on, at zero: increase() sees the
// first failure, which a series born at 1 would hide. A gate's wait
// series exists from its first ask.
func (m *webhookMetrics) start(d Delivery) {
	for _, o := range outcomes {
		m.deliveries.WithLabelValues(d.EDS.Namespace, d.EDS.Name, string(d.Webhook.Type), o)
	}
	if d.Webhook.Type.IsGate() {
		m.gateWait.WithLabelValues(d.EDS.Namespace, d.EDS.Name, string(d.Webhook.Type))
	}
}

func (m *webhookMetrics) observe(d Delivery, outcome string) {
	m.deliveries.WithLabelValues(d.EDS.Namespace, d.EDS.Name, string(d.Webhook.Type), outcome).Inc()
}

// forget drops the series of eds, deleted.
func (m *webhookMetrics) forget(eds types.NamespacedName) {
	labels := prometheus.Labels{"namespace": eds.Namespace, "name": eds.Name}
	m.deliveries.DeletePartialMatch(labels)
	m.gateWait.DeletePartialMatch(labels)
}

// ObserveGateWait records that a canary of eds waited d at a gate of type
// t, which then passed or timed out.
func ObserveGateWait(eds types.NamespacedName, t v1alpha1.CanaryWebhookType, d time.Duration) {
	deliveries().gateWait.WithLabelValues(eds.Namespace, eds.Name, string(t)).Observe(d.Seconds())
}
