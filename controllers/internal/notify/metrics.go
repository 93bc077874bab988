package notify

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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
			Help: "Webhook deliveries by webhook type and outcome: success (2xx), rejected (another status), error (no answer) or dropped (queue full).",
		}, []string{"type", "outcome"}),
		gateWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "extendeddaemonset_gate_wait_seconds",
			Help: "How long canaries waited at a gate, from the first ask to its pass or timeout, by webhook type.",
			// Seconds to the default timeout of an hour and beyond.
			Buckets: prometheus.ExponentialBuckets(1, 2, 14),
		}, []string{"type"}),
	}
	ctrlmetrics.Registry.MustRegister(m.deliveries, m.gateWait)
	return m
})

func (m *webhookMetrics) observe(t v1alpha1.CanaryWebhookType, outcome string) {
	m.deliveries.WithLabelValues(string(t), outcome).Inc()
}

// ObserveGateWait records that a canary waited d at a gate of type t,
// which then passed or timed out.
func ObserveGateWait(t v1alpha1.CanaryWebhookType, d time.Duration) {
	deliveries().gateWait.WithLabelValues(string(t)).Observe(d.Seconds())
}
