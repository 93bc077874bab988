package fluxevents

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Outcomes of a send.
const (
	outcomeSuccess = "success"
	outcomeFailure = "failure"
)

type queueMetrics struct {
	dropped prometheus.Counter
	sent    *prometheus.CounterVec
}

// metrics are registered with the manager's registry when the first queue
// is made: a manager without --events-addr exposes none of them, one with
// it exposes them from the start, at zero.
var metrics = sync.OnceValue(func() *queueMetrics {
	m := &queueMetrics{
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "extendeddaemonset_notification_events_dropped_total",
			Help: "Events not sent to the notification-controller: the queue was full, or the manager stopped before they were sent.",
		}),
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "extendeddaemonset_notification_events_sent_total",
			Help: "Events sent to the notification-controller, by outcome: success (accepted, or refused as a duplicate) or failure (after retries).",
		}, []string{"outcome"}),
	}
	m.sent.WithLabelValues(outcomeSuccess)
	m.sent.WithLabelValues(outcomeFailure)
	ctrlmetrics.Registry.MustRegister(m.dropped, m.sent)
	return m
})
