package controllers

import (
	"sync"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
)

// Canary states of the extendeddaemonset_canary_state metric.
const (
	canaryStateNone    = "none"
	canaryStateRunning = "running"
	canaryStatePaused  = "paused"
	canaryStateFailed  = "failed"
)

// edsMetrics are the per-ExtendedDaemonSet series dashboards and alerts
// read: conditions, pod counters, canary state and rollout durations.
type edsMetrics struct {
	condition       *prometheus.GaugeVec
	pods            map[string]*prometheus.GaugeVec
	canaryState     *prometheus.GaugeVec
	canaryNodes     *prometheus.GaugeVec
	rolloutDuration *prometheus.HistogramVec
	canaryDuration  *prometheus.HistogramVec
}

// rolloutStartSlack allows for the replica set of a new template being
// created just before the reconcile that creates it writes Ready=False:
// timestamps have whole seconds, and a busy API server adds its delay.
const rolloutStartSlack = 10 * time.Second

// durationBuckets span a few seconds to several hours: a canary of
// minutes, a rollout of thousands of nodes.
var durationBuckets = prometheus.ExponentialBuckets(5, 2, 13)

// extendedDaemonSetMetrics are registered once per process, like
// analysisMetrics.
var extendedDaemonSetMetrics = sync.OnceValue(func() *edsMetrics {
	m := newEDSMetrics()
	m.register(ctrlmetrics.Registry)
	return m
})

func newEDSMetrics() *edsMetrics {
	perEDS := []string{"namespace", "name"}
	gauge := func(name, help string, extra ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, append(perEDS, extra...))
	}
	m := &edsMetrics{
		condition: gauge("extendeddaemonset_status_condition",
			"Current conditions of an ExtendedDaemonSet: 1 per condition type with its status and reason.", "type", "status", "reason"),
		pods: map[string]*prometheus.GaugeVec{},
		canaryState: gauge("extendeddaemonset_canary_state",
			"State of the canary of an ExtendedDaemonSet: 1 for the current one of none, running, paused, failed.", "state"),
		canaryNodes: gauge("extendeddaemonset_canary_nodes", "Nodes the running canary of an ExtendedDaemonSet holds."),
		rolloutDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "extendeddaemonset_rollout_duration_seconds",
			Help:    "Time from a new pod template to every node running it, canary included.",
			Buckets: durationBuckets,
		}, perEDS),
		canaryDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "extendeddaemonset_canary_duration_seconds",
			Help:    "Time from a canary's start to its promotion or failure.",
			Buckets: durationBuckets,
		}, append(perEDS, "result")),
	}
	for _, counter := range []string{"desired", "current", "ready", "available", "updated"} {
		m.pods[counter] = gauge("extendeddaemonset_status_"+counter+"_pods", "The "+counter+" pods of an ExtendedDaemonSet, as in its status.")
	}
	return m
}

func (m *edsMetrics) collectors() []prometheus.Collector {
	cs := []prometheus.Collector{m.condition, m.canaryState, m.canaryNodes, m.rolloutDuration, m.canaryDuration}
	for _, g := range m.pods {
		cs = append(cs, g)
	}
	return cs
}

func (m *edsMetrics) register(reg prometheus.Registerer) {
	reg.MustRegister(m.collectors()...)
}

// observe exports the status of eds as written, and the duration of a
// rollout that just finished: one whose active replica set was created
// while the ExtendedDaemonSet was not ready, so that a node joining a
// rolled-out ExtendedDaemonSet is not taken for a rollout.
func (m *edsMetrics) observe(before, after *v1alpha1.ExtendedDaemonSet, active *v1alpha1.ExtendedDaemonSetReplicaSet, now time.Time) {
	ns, name := after.Namespace, after.Name
	m.condition.DeletePartialMatch(prometheus.Labels{"namespace": ns, "name": name})
	for _, c := range after.Status.Conditions {
		m.condition.WithLabelValues(ns, name, c.Type, string(c.Status), c.Reason).Set(1)
	}
	st := after.Status
	for counter, value := range map[string]int32{
		"desired": st.Desired, "current": st.Current, "ready": st.Ready, "available": st.Available, "updated": st.UpToDate,
	} {
		m.pods[counter].WithLabelValues(ns, name).Set(float64(value))
	}
	m.canaryState.DeletePartialMatch(prometheus.Labels{"namespace": ns, "name": name})
	m.canaryState.WithLabelValues(ns, name, canaryState(st.Canary)).Set(1)
	nodes := 0
	if c := canary.Running(after); c != nil {
		nodes = len(c.Nodes)
	}
	m.canaryNodes.WithLabelValues(ns, name).Set(float64(nodes))

	if wasReady := conditions.Get(before, v1alpha1.ReadyCondition); active != nil && conditions.IsReady(after) && wasReady != nil &&
		wasReady.Status != "True" && !active.CreationTimestamp.Add(rolloutStartSlack).Before(wasReady.LastTransitionTime.Time) {
		m.rolloutDuration.WithLabelValues(ns, name).Observe(now.Sub(active.CreationTimestamp.Time).Seconds())
	}
}

// observeCanaryEnd records how long a canary ran once it is promoted or
// failed.
func (m *edsMetrics) observeCanaryEnd(eds *v1alpha1.ExtendedDaemonSet, transition string, c *v1alpha1.CanaryStatus, now time.Time) {
	result := map[string]string{canary.Promoted: "promoted", canary.Failed: "failed"}[transition]
	if result == "" || c == nil || c.StartedAt == nil {
		return
	}
	m.canaryDuration.WithLabelValues(eds.Namespace, eds.Name, result).Observe(now.Sub(c.StartedAt.Time).Seconds())
}

// forget drops the series of a deleted ExtendedDaemonSet.
func (m *edsMetrics) forget(namespace, name string) {
	labels := prometheus.Labels{"namespace": namespace, "name": name}
	m.condition.DeletePartialMatch(labels)
	m.canaryState.DeletePartialMatch(labels)
	m.canaryNodes.DeletePartialMatch(labels)
	m.rolloutDuration.DeletePartialMatch(labels)
	m.canaryDuration.DeletePartialMatch(labels)
	for _, g := range m.pods {
		g.DeletePartialMatch(labels)
	}
}

func canaryState(c *v1alpha1.CanaryStatus) string {
	switch {
	case c == nil:
		return canaryStateNone
	case c.Failed:
		return canaryStateFailed
	case c.Paused:
		return canaryStatePaused
	default:
		return canaryStateRunning
	}
}
