package e2e

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/exporters/appmetrics"
	"github.com/extendeddaemonset/extendeddaemonset/test/exporters/kubestate"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/prometheus"
)

// trafficInterval is how often the request rates follow the pods.
const trafficInterval = 250 * time.Millisecond

// metricsStack is a real Prometheus scraping, every second, the pod
// statuses of the test's namespace as kube-state-metrics names them, and the
// request counters of its pods, whose rates the test sets.
type metricsStack struct {
	prom *prometheus.Server
	app  *appmetrics.Exporter

	mu      sync.Mutex
	traffic func(pod *corev1.Pod) map[string]float64
}

// startMetrics starts the stack for the scenario's namespace; it stops at
// the end of the test.
func (s *scenario) startMetrics() *metricsStack {
	s.t.Helper()
	state, err := kubestate.Start(env.Client, kubestate.Options{Namespace: s.ns})
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	s.t.Cleanup(func() { _ = state.Close() })
	app, err := appmetrics.Start(appmetrics.Options{})
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	s.t.Cleanup(func() { _ = app.Close() })
	prom, err := prometheus.Start(s.ctx, prometheus.Options{Targets: []string{state.Addr(), app.Addr()}, Dir: s.t.TempDir()})
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	s.t.Cleanup(func() {
		if s.t.Failed() {
			var logs strings.Builder
			prom.DumpLogs(&logs, 30)
			s.t.Log(logs.String())
		}
		_ = prom.Close()
	})
	m := &metricsStack{prom: prom, app: app}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { m.followPods(s, done) })
	s.t.Cleanup(func() { close(done); wg.Wait() })
	return m
}

// setTraffic sets the request rates of every pod from now on, by status
// code, as traffic returns them for the pod. A pod given nil publishes no
// series: never scraped if it never had any, gone stale in Prometheus if it
// had, as when an application stops exposing its metrics.
func (m *metricsStack) setTraffic(traffic func(pod *corev1.Pod) map[string]float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.traffic = traffic
}

// followPods gives every pod of the namespace the rates of the current
// traffic, new pods as they appear.
func (m *metricsStack) followPods(s *scenario, done <-chan struct{}) {
	ticker := time.NewTicker(trafficInterval)
	defer ticker.Stop()
	for {
		select {
		case <-done:
			return
		case <-ticker.C:
		}
		m.mu.Lock()
		traffic := m.traffic
		m.mu.Unlock()
		var pods corev1.PodList
		if traffic == nil || env.Client.List(s.ctx, &pods) != nil {
			continue
		}
		for i := range pods.Items {
			pod := &pods.Items[i]
			if pod.Namespace != s.ns {
				continue
			}
			rates := traffic(pod)
			if rates == nil {
				m.app.RemovePod(pod.Namespace, pod.Name)
			}
			for code, rate := range rates {
				m.app.SetRate(pod.Namespace, pod.Name, code, rate)
			}
		}
	}
}

// queriesAnswered is the number of instant queries Prometheus has answered
// since it started, from its own metrics.
func (m *metricsStack) queriesAnswered(g gomega.Gomega) int {
	resp, err := http.Get(m.prom.URL() + "/metrics")
	g.Expect(err).NotTo(gomega.HaveOccurred())
	defer resp.Body.Close()
	total := 0
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		line := lines.Text()
		if strings.HasPrefix(line, "prometheus_http_requests_total{") && strings.Contains(line, `handler="/api/v1/query"`) {
			fields := strings.Fields(line)
			n, err := strconv.ParseFloat(fields[len(fields)-1], 64)
			g.Expect(err).NotTo(gomega.HaveOccurred())
			total += int(n)
		}
	}
	g.Expect(lines.Err()).NotTo(gomega.HaveOccurred())
	return total
}

// ofReplicaSet picks rates by whether a pod belongs to the canary.
func ofReplicaSet(canary string, onCanary, onStable map[string]float64) func(*corev1.Pod) map[string]float64 {
	return func(pod *corev1.Pod) map[string]float64 {
		if pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel] == canary {
			return onCanary
		}
		return onStable
	}
}

// requests is a request rate per second split into successes and errors.
func requests(perSecond, errorRatio float64) map[string]float64 {
	return map[string]float64{"200": perSecond * (1 - errorRatio), "500": perSecond * errorRatio}
}

// analysisOf is an analysis on the stack's Prometheus measuring every 2s
// after a short warm-up, so that rate() has samples to work on.
func (m *metricsStack) analysisOf(metrics ...v1alpha1.AnalysisMetric) *v1alpha1.CanaryAnalysis {
	return &v1alpha1.CanaryAnalysis{
		Provider: v1alpha1.AnalysisProvider{Prometheus: &v1alpha1.PrometheusProvider{
			Address: m.prom.URL(), Timeout: &metav1.Duration{Duration: 2 * time.Second},
		}},
		Interval:     &metav1.Duration{Duration: 2 * time.Second},
		InitialDelay: &metav1.Duration{Duration: 4 * time.Second},
		Metrics:      metrics,
	}
}

// errorRateMetric is the errorRate preset on http_requests_total.
func errorRateMetric(name string, maxRatio float64) v1alpha1.AnalysisMetric {
	return v1alpha1.AnalysisMetric{
		Name: name, Preset: v1alpha1.MetricPresetErrorRate,
		ErrorRate:      &v1alpha1.ErrorRatePreset{RequestMetric: "http_requests_total", ErrorSelector: `code=~"5.."`},
		ThresholdRange: &v1alpha1.ThresholdRange{Max: &maxRatio},
	}
}
