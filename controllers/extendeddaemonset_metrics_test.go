package controllers

import (
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
)

func metricsEDS(ready metav1.ConditionStatus, since time.Time) *v1alpha1.ExtendedDaemonSet {
	return &v1alpha1.ExtendedDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "agent"},
		Status: v1alpha1.ExtendedDaemonSetStatus{
			Desired: 3, Current: 3, Ready: 2, Available: 2, UpToDate: 1,
			Conditions: []metav1.Condition{{Type: v1alpha1.ReadyCondition, Status: ready, Reason: "R", LastTransitionTime: metav1.NewTime(since)}},
		},
	}
}

func TestMetricsFollowTheStatus(t *testing.T) {
	g := gomega.NewWithT(t)
	reg := prometheus.NewRegistry()
	m := newEDSMetrics()
	m.register(reg)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

	notReady := metricsEDS(metav1.ConditionFalse, start)
	canaryRunning := notReady.DeepCopy()
	canaryRunning.Status.Canary = &v1alpha1.CanaryStatus{ReplicaSet: "agent-2", Nodes: []string{"a", "b"}}
	m.observe(notReady, canaryRunning, nil, start)
	g.Expect(testutil.CollectAndCompare(reg, strings.NewReader(`
# HELP extendeddaemonset_canary_state State of the canary of an ExtendedDaemonSet: 1 for the current one of none, running, paused, failed.
# TYPE extendeddaemonset_canary_state gauge
extendeddaemonset_canary_state{name="agent",namespace="ns",state="running"} 1
# HELP extendeddaemonset_canary_nodes Nodes the running canary of an ExtendedDaemonSet holds.
# TYPE extendeddaemonset_canary_nodes gauge
extendeddaemonset_canary_nodes{name="agent",namespace="ns"} 2
# HELP extendeddaemonset_status_updated_pods The updated pods of an ExtendedDaemonSet, as in its status.
# TYPE extendeddaemonset_status_updated_pods gauge
extendeddaemonset_status_updated_pods{name="agent",namespace="ns"} 1
# HELP extendeddaemonset_status_condition Current conditions of an ExtendedDaemonSet: 1 per condition type with its status and reason.
# TYPE extendeddaemonset_status_condition gauge
extendeddaemonset_status_condition{name="agent",namespace="ns",reason="R",status="False",type="Ready"} 1
`), "extendeddaemonset_canary_state", "extendeddaemonset_canary_nodes", "extendeddaemonset_status_updated_pods",
		"extendeddaemonset_status_condition")).To(gomega.Succeed())

	// Promoted, then rolled out: the old condition and canary state go, and
	// the rollout lasted from the creation of the active replica set.
	active := &v1alpha1.ExtendedDaemonSetReplicaSet{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(start.Add(time.Second))}}
	m.observeCanaryEnd(canaryRunning, canary.Promoted, &v1alpha1.CanaryStatus{StartedAt: &metav1.Time{Time: start}}, start.Add(time.Minute))
	done := metricsEDS(metav1.ConditionTrue, start.Add(2*time.Minute))
	m.observe(notReady, done, active, start.Add(2*time.Minute+time.Second))
	g.Expect(testutil.ToFloat64(m.canaryState.WithLabelValues("ns", "agent", canaryStateNone))).To(gomega.Equal(1.0))
	g.Expect(testutil.CollectAndCount(m.canaryState)).To(gomega.Equal(1), "only the current canary state")
	g.Expect(testutil.CollectAndCount(m.condition)).To(gomega.Equal(1), "only the current conditions")
	g.Expect(histogram(g, m.rolloutDuration, "ns", "agent")).To(gomega.Equal([2]float64{1, 120}))
	g.Expect(histogram(g, m.canaryDuration, "ns", "agent", "promoted")).To(gomega.Equal([2]float64{1, 60}))

	// The first template: its replica set is created just before the
	// reconcile writes Ready=False, and that rollout counts too.
	first := &v1alpha1.ExtendedDaemonSetReplicaSet{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(start.Add(2 * time.Hour))}}
	m.observe(metricsEDS(metav1.ConditionFalse, start.Add(2*time.Hour+time.Second)), done, first, start.Add(2*time.Hour+time.Minute))
	g.Expect(histogram(g, m.rolloutDuration, "ns", "agent")).To(gomega.Equal([2]float64{2, 180}))

	// Ready again after a node joined: no new rollout to time.
	m.observe(metricsEDS(metav1.ConditionFalse, start.Add(3*time.Hour)), done, first, start.Add(4*time.Hour))
	g.Expect(histogram(g, m.rolloutDuration, "ns", "agent")).To(gomega.Equal([2]float64{2, 180}))

	m.forget("ns", "agent")
	for _, c := range m.collectors() {
		g.Expect(testutil.CollectAndCount(c)).To(gomega.BeZero(), "series left after the ExtendedDaemonSet is gone")
	}
}

// histogram is the count and sum of one series of h.
func histogram(g gomega.Gomega, h *prometheus.HistogramVec, labels ...string) [2]float64 {
	var out dto.Metric
	observer, err := h.GetMetricWithLabelValues(labels...)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(observer.(prometheus.Metric).Write(&out)).To(gomega.Succeed())
	return [2]float64{float64(out.GetHistogram().GetSampleCount()), out.GetHistogram().GetSampleSum()}
}
