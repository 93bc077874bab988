// Package analysis tests the analysis package against a real Prometheus: the
// queries it renders go through the real PromQL parser and select real
// scraped series, and its verdicts are taken on what Prometheus answers.
package analysis

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/onsi/gomega"

	"github.com/extendeddaemonset/extendeddaemonset/analysis"
	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/exporters/appmetrics"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/prometheus"
)

const (
	eventually = 30 * time.Second
	poll       = 250 * time.Millisecond
	// scrapeInterval is short so that rate() has two samples within seconds.
	scrapeInterval = time.Second
	// window is the span of every measurement: longer than the package runs,
	// so that it covers each series from its first sample and the ratio of
	// two series that grow in proportion is exact.
	window = 5 * time.Minute
	// startTimeout bounds the start of a Prometheus.
	startTimeout = time.Minute
	// requestMetric is the counter the appmetrics exporter publishes.
	requestMetric = "http_requests_total"
)

// Every test sets the traffic of its own namespace label values on app, which
// shared scrapes. Tests that stop Prometheus or scrape other targets start
// their own.
var (
	app    *appmetrics.Exporter
	shared *prometheus.Server
	// querier queries shared the way the controller queries a provider.
	querier analysis.Querier
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	app, err = appmetrics.Start(appmetrics.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = app.Close() }()

	shared, querier, err = startPrometheus(context.Background(), app.Addr())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = shared.Close() }()

	code := m.Run()
	if code != 0 {
		shared.DumpLogs(os.Stderr, 40)
	}
	return code
}

// startPrometheus starts a Prometheus scraping targets every scrapeInterval
// and a Querier of it as the controller makes one for a provider.
func startPrometheus(ctx context.Context, targets ...string) (*prometheus.Server, analysis.Querier, error) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	srv, err := prometheus.Start(ctx, prometheus.Options{ScrapeInterval: scrapeInterval, Targets: targets})
	if err != nil {
		return nil, nil, err
	}
	q, err := analysis.NewQuerier(v1alpha1.PrometheusProvider{Address: srv.URL()}, analysis.Credentials{})
	if err != nil {
		return nil, nil, errors.Join(err, srv.Close())
	}
	return srv, q, nil
}

// ownPrometheus starts a Prometheus for the test alone, which logs its tail
// if the test failed and closes at the end of the test.
func ownPrometheus(t *testing.T, targets ...string) (*prometheus.Server, analysis.Querier) {
	t.Helper()
	srv, q, err := startPrometheus(t.Context(), targets...)
	gomega.NewWithT(t).Expect(err).NotTo(gomega.HaveOccurred())
	t.Cleanup(func() {
		if t.Failed() {
			srv.DumpLogs(t.Output(), 40)
		}
		gomega.NewWithT(t).Expect(srv.Close()).To(gomega.Succeed())
	})
	return srv, q
}

// serve makes a pod answer perSecond requests, errorRatio of them with code
// 500. A pod without errors has no 500 series at all, as an application
// that never failed publishes none.
func serve(namespace, pod string, perSecond, errorRatio float64) {
	app.SetRate(namespace, pod, "200", perSecond*(1-errorRatio))
	if errorRatio > 0 {
		app.SetRate(namespace, pod, "500", perSecond*errorRatio)
	}
}

func errorRateMetric(maxRatio float64) v1alpha1.AnalysisMetric {
	return v1alpha1.AnalysisMetric{
		Name:           "error-rate",
		Preset:         v1alpha1.MetricPresetErrorRate,
		ErrorRate:      &v1alpha1.ErrorRatePreset{RequestMetric: requestMetric, ErrorSelector: `code=~"5.."`},
		ThresholdRange: &v1alpha1.ThresholdRange{Max: &maxRatio},
	}
}

func queryMetric(query string, maxValue float64) v1alpha1.AnalysisMetric {
	return v1alpha1.AnalysisMetric{Name: "custom", Query: query, ThresholdRange: &v1alpha1.ThresholdRange{Max: &maxValue}}
}

func canaryOf(namespace string, pods ...string) analysis.Target {
	return analysis.Target{Namespace: namespace, Name: "agent", CanaryPods: pods}
}

// measured measures metric on target through q until the measurement is in
// phase want and passes check. Prometheus is up and every query is valid, so
// an Error nobody asked for is never transient: it fails at once.
func measured(t *testing.T, q analysis.Querier, metric v1alpha1.AnalysisMetric, target analysis.Target,
	want v1alpha1.AnalysisPhase, check func(gomega.Gomega, v1alpha1.Measurement),
) v1alpha1.Measurement {
	t.Helper()
	vars := analysis.Vars{Target: target, Interval: scrapeInterval, Window: window}
	var m v1alpha1.Measurement
	gomega.NewWithT(t).Eventually(func(g gomega.Gomega) {
		m = analysis.Measure(t.Context(), q, metric, vars, time.Now())
		if m.Phase == v1alpha1.AnalysisError && want != v1alpha1.AnalysisError {
			gomega.StopTrying(fmt.Sprintf("measurement error: %s\nquery: %s", m.Message, m.Query)).Now()
		}
		g.Expect(m.Phase).To(gomega.Equal(want), "message: %s\nquery: %s", m.Message, m.Query)
		if check != nil {
			check(g, m)
		}
	}).WithTimeout(eventually).WithPolling(poll).Should(gomega.Succeed())
	return m
}

// near checks that a measured value, as text, is want give or take tolerance
// (the jitter between a scrape and the exporter's clock).
func near(g gomega.Gomega, what, value string, want float64) {
	g.Expect(value).NotTo(gomega.BeEmpty(), what)
	x, err := strconv.ParseFloat(value, 64)
	g.Expect(err).NotTo(gomega.HaveOccurred(), what)
	g.Expect(x).To(gomega.BeNumerically("~", want, 1e-3), what)
}

// valueNear checks a measurement's value.
func valueNear(want float64) func(gomega.Gomega, v1alpha1.Measurement) {
	return func(g gomega.Gomega, m v1alpha1.Measurement) { near(g, "value", m.Value, want) }
}
