package analysis

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/extendeddaemonset/extendeddaemonset/analysis/web"
	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// endpoint is a local HTTP server standing in for a user's metric endpoint:
// it answers with status and body, and records the requests it got.
type endpoint struct {
	server *httptest.Server

	mu       sync.Mutex
	status   int
	body     string
	requests []*http.Request
	bodies   []string
}

func newEndpoint(t *testing.T, status int, body string) *endpoint {
	e := &endpoint{status: status, body: body}
	e.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		defer e.mu.Unlock()
		e.requests = append(e.requests, r)
		e.bodies = append(e.bodies, string(data))
		w.WriteHeader(e.status)
		_, _ = io.WriteString(w, e.body)
	}))
	t.Cleanup(e.server.Close)
	return e
}

func (e *endpoint) answer(status int, body string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.status, e.body = status, body
}

// localWeb sends web metrics to local endpoints, with the Secrets of
// secrets; it retries nothing, so that an error answer is measured at once.
func localWeb(t *testing.T, secrets map[string]map[string][]byte) WebQuerier {
	policy, err := web.ParseHostPolicy([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	return NewWebQuerier(web.NewClient(policy), func(ctx context.Context, r *v1alpha1.WebRequest) (web.Request, error) {
		resolved, err := web.Resolve(ctx, nil, "agents", &v1alpha1.WebRequest{URL: r.URL, RequestTimeout: r.RequestTimeout})
		if r.URLFrom != nil {
			value, ok := secrets[r.URLFrom.Name][r.URLFrom.Key]
			if !ok {
				return web.Request{}, errors.New("urlFrom: Secret agents/" + r.URLFrom.Name + " not found")
			}
			resolved, err = web.Request{URL: string(value), Timeout: time.Second}, nil
		}
		resolved.Retries = 0
		return resolved, err
	})
}

func webMetric(url string, threshold *v1alpha1.ThresholdRange) v1alpha1.AnalysisMetric {
	return v1alpha1.AnalysisMetric{
		Name:           "synthetic",
		Web:            &v1alpha1.WebMetric{WebRequest: v1alpha1.WebRequest{URL: url}, JSONPath: "{.data.errorRate}"},
		ThresholdRange: threshold,
	}
}

func TestMeasureWebJudgesTheNumberAtJSONPath(t *testing.T) {
	e := newEndpoint(t, http.StatusOK, `{"data": {"errorRate": 0.02}}`)
	w := localWeb(t, nil)
	m := webMetric(e.server.URL+"/metrics/agent", maxRange(0.05))

	got := MeasureWeb(t.Context(), w, m, t0)
	if got.Phase != v1alpha1.AnalysisSuccessful || got.Value != "0.02" || got.Query != "GET "+e.server.URL+"/metrics/agent" ||
		!got.Time.Time.Equal(t0) {
		t.Fatalf("got %+v", got)
	}
	if accept := e.requests[0].Header.Get("Accept"); accept != "application/json" || e.requests[0].Method != http.MethodGet {
		t.Errorf("sent %s with Accept %q", e.requests[0].Method, accept)
	}

	e.answer(http.StatusOK, `{"data": {"errorRate": "0.5"}}`)
	got = MeasureWeb(t.Context(), w, m, t0)
	if got.Phase != v1alpha1.AnalysisFailed || got.Value != "0.5" || got.Message != "0.5 > max 0.05" {
		t.Fatalf("got %+v", got)
	}

	e.answer(http.StatusOK, `{"data": {"errorRate": "NaN"}}`)
	if got = MeasureWeb(t.Context(), w, m, t0); got.Phase != v1alpha1.AnalysisInconclusive {
		t.Fatalf("NaN: got %+v", got)
	}
}

func TestMeasureWebPostsItsBody(t *testing.T) {
	e := newEndpoint(t, http.StatusOK, `{"data": {"errorRate": 0}}`)
	m := webMetric(e.server.URL, maxRange(0))
	m.Web.Method, m.Web.Body = http.MethodPost, `{"service": "agent"}`
	if got := MeasureWeb(t.Context(), localWeb(t, nil), m, t0); got.Phase != v1alpha1.AnalysisSuccessful || got.Query != "POST "+e.server.URL {
		t.Fatalf("got %+v", got)
	}
	r := e.requests[0]
	if r.Method != http.MethodPost || e.bodies[0] != `{"service": "agent"}` || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("sent %s %q with Content-Type %q", r.Method, e.bodies[0], r.Header.Get("Content-Type"))
	}
}

// Whatever the endpoint answers, the measurement's message is a fixed text
// and never quotes the answer.
func TestMeasureWebErrorsNeverQuoteTheAnswer(t *testing.T) {
	const leak = "internal-detail"
	cases := []struct {
		name    string
		status  int
		body    string
		path    string
		message string
	}{
		{"5xx", http.StatusServiceUnavailable, `{"error": "` + leak + `"}`, "", "web request answered 503, not 2xx"},
		{"4xx", http.StatusForbidden, leak, "", "web request answered 403, not 2xx"},
		{"redirect", http.StatusFound, leak, "", "web request answered 302, not 2xx"},
		{"not JSON", http.StatusOK, "<html>" + leak + "</html>", "", "web request answered 200, but the answer is not JSON"},
		{"missing path", http.StatusOK, `{"data": {"other": "` + leak + `"}}`, "", "web request answered 200, but the answer has no value at jsonPath"},
		{"not a number", http.StatusOK, `{"data": {"errorRate": "` + leak + `"}}`, "", "web request answered 200, but the value at jsonPath is not a number"},
		{"many values", http.StatusOK, `{"data": [{"v": 1}, {"v": 2}]}`, "{.data[*].v}", "jsonPath selects more than one value"},
		{"too large", http.StatusOK, `{"data": {"errorRate": 0, "pad": "` + strings.Repeat(leak, web.MaxResponseBody/len(leak)) + `"}}`, "",
			"web request answered more than 64 KiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEndpoint(t, c.status, c.body)
			m := webMetric(e.server.URL, maxRange(1))
			if c.path != "" {
				m.Web.JSONPath = c.path
			}
			got := MeasureWeb(t.Context(), localWeb(t, nil), m, t0)
			if got.Phase != v1alpha1.AnalysisError || !strings.Contains(got.Message, c.message) || strings.Contains(got.Message, leak) || got.Value != "" {
				t.Errorf("got %+v, want Error %q", got, c.message)
			}
		})
	}
}

func TestMeasureWebExplainsARequestThatWasNotAnswered(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	secretURL := map[string]map[string][]byte{"hook": {"url": []byte(closed.URL + "/s3cr3t")}}
	cases := []struct {
		name    string
		metric  v1alpha1.AnalysisMetric
		web     WebQuerier
		message string
	}{
		{"connection refused", webMetric(closed.URL, maxRange(1)), localWeb(t, nil), "web request failed: connection refused"},
		{"host not allowed", webMetric("http://169.254.169.254/latest", maxRange(1)), localWeb(t, nil),
			"web request refused: host 169.254.169.254 is not allowed for webhooks and web metrics: add it to --allowed-webhook-hosts"},
		{"loopback by default", webMetric(closed.URL, maxRange(1)), NewWebQuerier(web.NewClient(web.HostPolicy{}), resolveInline),
			"web request refused: host 127.0.0.1 is not allowed for webhooks and web metrics: add it to --allowed-webhook-hosts"},
		{"missing Secret", urlFrom("nope"), localWeb(t, secretURL), "web request not sent: urlFrom: Secret agents/nope not found"},
		{"URL from a Secret", urlFrom("hook"), localWeb(t, secretURL), "web request failed: connection refused"},
		{"no client", webMetric(closed.URL, maxRange(1)), nil, "no web client: web metrics cannot be measured"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := MeasureWeb(t.Context(), c.web, c.metric, t0)
			if got.Phase != v1alpha1.AnalysisError || got.Message != c.message || strings.Contains(got.Message+got.Query, "s3cr3t") {
				t.Errorf("got %+v, want Error %q", got, c.message)
			}
		})
	}
}

func resolveInline(ctx context.Context, r *v1alpha1.WebRequest) (web.Request, error) {
	return web.Resolve(ctx, nil, "agents", r)
}

func urlFrom(secret string) v1alpha1.AnalysisMetric {
	m := webMetric("", maxRange(1))
	m.Web.URLFrom = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: "url"}
	return m
}

// The step's deadline, not only the request's timeout, bounds a web metric.
func TestMeasureWebWithinTheStepDeadline(t *testing.T) {
	release := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer hanging.Close()
	defer close(release)

	spec := &v1alpha1.CanaryAnalysis{Metrics: []v1alpha1.AnalysisMetric{webMetric(hanging.URL, maxRange(1))}}
	a := Analyzer{Web: localWeb(t, nil), StepTimeout: 200 * time.Millisecond}
	start := time.Now()
	st, _ := a.Step(t.Context(), spec, nil, testVars().Target, t0.Add(-time.Hour), t0)
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("the step took %s", elapsed)
	}
	got := st.Metrics[0].Measurements[0]
	if got.Phase != v1alpha1.AnalysisError || got.Message != "web request failed: timed out: no answer within the 200ms an analysis step may take" {
		t.Errorf("got %+v", got)
	}
}

// A web metric is measured and recorded by a Step like any metric, beside
// a Prometheus metric, and still when Prometheus could not be configured.
func TestStepMeasuresWebMetricsBesidePrometheus(t *testing.T) {
	e := newEndpoint(t, http.StatusOK, `{"data": {"errorRate": 0.5}}`)
	spec := &v1alpha1.CanaryAnalysis{Metrics: []v1alpha1.AnalysisMetric{
		webMetric(e.server.URL, maxRange(0.05)),
		{Name: "restarts", Preset: v1alpha1.MetricPresetRestarts},
	}}
	a := Analyzer{QuerierError: errors.New("credentials in Secret agents/prometheus: secret key \"token\" is empty"), Web: localWeb(t, nil)}
	st, _ := a.Step(t.Context(), spec, nil, testVars().Target, t0.Add(-time.Hour), t0)
	results := map[string]v1alpha1.MetricResult{}
	for _, r := range st.Metrics {
		results[r.Name] = r
	}
	if r := results["synthetic"]; r.Phase != v1alpha1.AnalysisFailed || r.Failed != 1 || r.Measurements[0].Value != "0.5" {
		t.Errorf("web metric: %+v", r)
	}
	if r := results["restarts"]; r.Error != 1 || !strings.Contains(r.Message, `secret key "token" is empty`) {
		t.Errorf("Prometheus metric: %+v", r)
	}
	if st.Phase != v1alpha1.AnalysisFailed || !strings.Contains(st.Message, "synthetic") {
		t.Errorf("analysis: %s: %s", st.Phase, st.Message)
	}
}

// A web metric that can never be measured is a spec error, found before
// any request.
func TestCheckMetricsRefusesBrokenWebMetrics(t *testing.T) {
	valid := func() v1alpha1.AnalysisMetric { return webMetric("http://receiver.agents.svc/metric", maxRange(1)) }
	cases := []struct {
		name   string
		change func(*v1alpha1.AnalysisMetric)
		want   string
	}{
		{"query too", func(m *v1alpha1.AnalysisMetric) { m.Query = "up" }, "set exactly one"},
		{"baseline", func(m *v1alpha1.AnalysisMetric) {
			m.Baseline = &v1alpha1.BaselineComparison{MaxRelativeIncrease: new(10.0)}
		}, "no baseline"},
		{"no threshold", func(m *v1alpha1.AnalysisMetric) { m.ThresholdRange = nil }, "needs thresholdRange"},
		{"no URL", func(m *v1alpha1.AnalysisMetric) { m.Web.URL = "" }, "exactly one of url or urlFrom"},
		{"method", func(m *v1alpha1.AnalysisMetric) { m.Web.Method = "PUT" }, `method "PUT"`},
		{"body with GET", func(m *v1alpha1.AnalysisMetric) { m.Web.Body = "{}" }, "only sent with method POST"},
		{"jsonPath", func(m *v1alpha1.AnalysisMetric) { m.Web.JSONPath = "{.data[" }, `jsonPath "{.data["`},
	}
	for _, c := range cases {
		m := valid()
		c.change(&m)
		err := CheckMetrics(&v1alpha1.CanaryAnalysis{Metrics: []v1alpha1.AnalysisMetric{m}})
		var specErr *SpecError
		if !errors.As(err, &specErr) || !strings.Contains(err.Error(), c.want) || specErr.Metric != "synthetic" {
			t.Errorf("%s: got %v, want a spec error with %q", c.name, err, c.want)
		}
		if got := MeasureWeb(t.Context(), nil, m, t0); got.Phase != v1alpha1.AnalysisError || !strings.Contains(got.Message, c.want) {
			t.Errorf("%s: measured %+v", c.name, got)
		}
	}
	if err := CheckMetrics(&v1alpha1.CanaryAnalysis{Metrics: []v1alpha1.AnalysisMetric{valid()}}); err != nil {
		t.Errorf("valid web metric: %v", err)
	}
}
