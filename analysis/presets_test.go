package analysis

import (
	"strings"
	"testing"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

func errorRateMetric(selector string) v1alpha1.AnalysisMetric {
	return v1alpha1.AnalysisMetric{
		Name:      "error-rate",
		Preset:    v1alpha1.MetricPresetErrorRate,
		ErrorRate: &v1alpha1.ErrorRatePreset{RequestMetric: "http_requests_total", ErrorSelector: selector},
	}
}

func TestQueryOfRendersPresets(t *testing.T) {
	restarts := v1alpha1.AnalysisMetric{Name: "restarts", Preset: v1alpha1.MetricPresetRestarts}
	restartsAgainstStable := restarts
	restartsAgainstStable.Baseline = &v1alpha1.BaselineComparison{MaxRelativeIncrease: ptr(50.0)}
	custom := errorRateMetric(`code=~"5..", method != "GET"`)
	custom.ErrorRate.PodLabel = "kubernetes_pod"

	cases := []struct {
		name   string
		metric v1alpha1.AnalysisMetric
		perPod bool
		want   string
	}{
		{"restarts", restarts, false,
			`sum(increase(kube_pod_container_status_restarts_total{namespace="agents",pod=~"canary-a|canary-b"}[10m]))` +
				` and on() kube_pod_container_status_restarts_total{namespace="agents",pod=~"canary-a|canary-b"}`},
		{"restarts per pod", restarts, true,
			`sum by (pod) (increase(kube_pod_container_status_restarts_total{namespace="agents",pod=~"canary-a|canary-b"}[10m]))` +
				` and on(pod) kube_pod_container_status_restarts_total{namespace="agents",pod=~"canary-a|canary-b"}`},
		{"restarts against a baseline are a mean per pod", restartsAgainstStable, false,
			`avg(sum by (pod) (increase(kube_pod_container_status_restarts_total{namespace="agents",pod=~"canary-a|canary-b"}[10m])))` +
				` and on() kube_pod_container_status_restarts_total{namespace="agents",pod=~"canary-a|canary-b"}`},
		{"error rate", errorRateMetric(`code=~"5.."`), false,
			`(sum(rate(http_requests_total{namespace="agents",pod=~"canary-a|canary-b",code=~"5.."}[10m]))` +
				` or sum(rate(http_requests_total{namespace="agents",pod=~"canary-a|canary-b"}[10m])) * 0)` +
				` / sum(rate(http_requests_total{namespace="agents",pod=~"canary-a|canary-b"}[10m]))` +
				` and on() http_requests_total{namespace="agents",pod=~"canary-a|canary-b"}`},
		{"error rate per pod with a pod label", custom, true,
			`(sum by (kubernetes_pod) (rate(http_requests_total{namespace="agents",kubernetes_pod=~"canary-a|canary-b",code=~"5..", method != "GET"}[10m]))` +
				` or sum by (kubernetes_pod) (rate(http_requests_total{namespace="agents",kubernetes_pod=~"canary-a|canary-b"}[10m])) * 0)` +
				` / sum by (kubernetes_pod) (rate(http_requests_total{namespace="agents",kubernetes_pod=~"canary-a|canary-b"}[10m]))` +
				` and on(kubernetes_pod) http_requests_total{namespace="agents",kubernetes_pod=~"canary-a|canary-b"}`},
		{"a query is returned as written", v1alpha1.AnalysisMetric{Name: "q", Query: `up{pod=~"{{.CanaryPodRegex}}"}`}, true,
			`up{pod=~"canary-a|canary-b"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmpl, err := QueryOf(c.metric, c.perPod)
			if err != nil {
				t.Fatal(err)
			}
			got := mustRender(t, tmpl, testVars())
			if got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
			lexPromQL(t, got)
		})
	}
}

func TestRestartsDefaultsToMaxZero(t *testing.T) {
	r := thresholdOf(v1alpha1.AnalysisMetric{Preset: v1alpha1.MetricPresetRestarts})
	if r == nil || r.Min != nil || r.Max == nil || *r.Max != 0 {
		t.Errorf("restarts threshold = %+v, want max 0", r)
	}
	own := maxRange(2)
	if r := thresholdOf(v1alpha1.AnalysisMetric{Preset: v1alpha1.MetricPresetRestarts, ThresholdRange: own}); r != own {
		t.Errorf("a metric's own threshold must win, got %+v", r)
	}
	if r := thresholdOf(errorRateMetric(`code="500"`)); r != nil {
		t.Errorf("errorRate has no default threshold, got %+v", r)
	}
}

func TestErrorSelectorValidation(t *testing.T) {
	valid := []string{
		`code=~"5.."`,
		`code="500"`,
		` code != "200" , method!~"GET|HEAD" `,
		`msg="say \"hi\" {{.Namespace}} }"`,
		`path=~"/a\\.b"`,
	}
	for _, sel := range valid {
		tmpl, err := QueryOf(errorRateMetric(sel), false)
		if err != nil {
			t.Errorf("selector %q rejected: %v", sel, err)
			continue
		}
		query := mustRender(t, tmpl, testVars())
		// The selector comes out verbatim, template delimiters included.
		if !strings.Contains(query, strings.TrimSpace(sel)+"}") {
			t.Errorf("selector %q not found verbatim in %s", sel, query)
		}
		lexPromQL(t, query)
	}

	invalid := []string{
		``,
		`code`,
		`code=5`,
		`code=~"5.."}`,
		`code=~"5.."} or vector(1) or x{a="b"`,
		`code=~"5..",`,
		`,code="5"`,
		`code="5" method="GET"`,
		`code="5\"`,
		`code='500'`,
		"code=\"5\n\"",
		`code=="5"`,
		`1code="5"`,
		`code="5"} # `,
	}
	for _, sel := range invalid {
		if q, err := QueryOf(errorRateMetric(sel), false); err == nil {
			t.Errorf("selector %q accepted: %s", sel, q)
		} else if !strings.Contains(err.Error(), "errorSelector") {
			t.Errorf("selector %q: error %q does not name the field", sel, err)
		}
	}
}

func TestQueryOfRejectsBadMetrics(t *testing.T) {
	badMetricName := errorRateMetric(`code="5"`)
	badMetricName.ErrorRate.RequestMetric = `x{a="b"}`
	badPodLabel := errorRateMetric(`code="5"`)
	badPodLabel.ErrorRate.PodLabel = `pod="x"`
	cases := map[string]v1alpha1.AnalysisMetric{
		"both query and preset":    {Name: "m", Query: "up", Preset: v1alpha1.MetricPresetRestarts},
		"neither query nor preset": {Name: "m"},
		"unknown preset":           {Name: "m", Preset: "latency"},
		"errorRate without config": {Name: "m", Preset: v1alpha1.MetricPresetErrorRate},
		"bad request metric":       badMetricName,
		"bad pod label":            badPodLabel,
	}
	for name, m := range cases {
		if q, err := QueryOf(m, false); err == nil {
			t.Errorf("%s: accepted as %s", name, q)
		}
	}
}
