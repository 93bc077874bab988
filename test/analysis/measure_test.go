package analysis

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/onsi/gomega"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/analysis"
	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// A pod name full of regex metacharacters and PromQL string syntax selects
// that pod's series and nothing else, in the errorRate preset and in a query
// of the user's, and never makes a query Prometheus rejects. Each pod has an
// error ratio of its own, and the decoys, which a name escaped wrongly would
// also match, a far higher one: any other series in the sum moves the value.
func TestHostileNamesSelectOnlyTheirPod(t *testing.T) {
	t.Parallel()
	const namespace = `escaping "ns" \ {x}`
	hostile := []string{
		"agent.1", "a|b", "x.*", `p"q`, "r}s", `t\u`, "v\nw", "tab\tx", "(y+)?", "[z]",
		// Characters that are not printable ASCII reach PromQL as \u and \x
		// escapes, which its lexer must read back to the same bytes.
		"é\u00a0\u200b\x7f",
	}
	decoys := []string{
		"agentx1", // agent.1 with the dot unescaped
		"a",       // a|b as an alternation
		"b",
		"xyz", // x.* as a wildcard
		"x.",
		`t\\u`, // t\u escaped twice
		"yyy",  // (y+)? as a group
		"z",    // [z] as a class
	}
	const perSecond = 20
	ratio := func(i int) float64 { return float64(i+1) / 25 }
	for i, pod := range hostile {
		serve(namespace, pod, perSecond, ratio(i))
	}
	for _, pod := range decoys {
		serve(namespace, pod, perSecond, 0.95)
	}

	errorsOverSuccesses := queryMetric(
		`sum(rate(`+requestMetric+`{namespace="{{.Namespace}}",pod=~"{{.CanaryPodRegex}}",code="500"}[{{.Window}}]))`+
			` / sum(rate(`+requestMetric+`{namespace="{{.Namespace}}",pod=~"{{.CanaryPodRegex}}",code="200"}[{{.Window}}]))`,
		100)
	for i, pod := range hostile {
		t.Run(strconv.Quote(pod), func(t *testing.T) {
			t.Parallel()
			r := ratio(i)
			target := canaryOf(namespace, pod)
			measured(t, querier, errorRateMetric(1), target, v1alpha1.AnalysisSuccessful, valueNear(r))
			measured(t, querier, errorsOverSuccesses, target, v1alpha1.AnalysisSuccessful, valueNear(r/(1-r)))
		})
	}
}

func TestErrorRatePreset(t *testing.T) {
	t.Parallel()
	const namespace = "error-rate"
	serve(namespace, "clean", 10, 0)
	serve(namespace, "idle", 0, 0)
	serve(namespace, "broken", 10, 0.5)
	metric := errorRateMetric(0.05)

	// The preset turns a missing error series into 0: a canary that never
	// failed is judged, not left waiting for data.
	t.Run("no errors", func(t *testing.T) {
		t.Parallel()
		m := measured(t, querier, metric, canaryOf(namespace, "clean"), v1alpha1.AnalysisSuccessful, nil)
		gomega.NewWithT(t).Expect(m.Value).To(gomega.Equal("0"), m.Message)
	})
	t.Run("no traffic", func(t *testing.T) {
		t.Parallel()
		measured(t, querier, metric, canaryOf(namespace, "idle"), v1alpha1.AnalysisInconclusive,
			func(g gomega.Gomega, m v1alpha1.Measurement) {
				// Before two samples the answer is "no data"; NaN says the
				// series are there and carry no request.
				g.Expect(m.Value).To(gomega.Equal("NaN"), m.Message)
				g.Expect(m.Message).To(gomega.ContainSubstring("returned NaN"))
			})
	})
	t.Run("half errors", func(t *testing.T) {
		t.Parallel()
		measured(t, querier, metric, canaryOf(namespace, "broken"), v1alpha1.AnalysisFailed,
			func(g gomega.Gomega, m v1alpha1.Measurement) {
				near(g, "value", m.Value, 0.5)
				g.Expect(m.Message).To(gomega.ContainSubstring(m.Value + " > max 0.05"))
			})
	})
}

// mannWhitneySummary reads U and p from a Mann-Whitney verdict.
var mannWhitneySummary = regexp.MustCompile(`U=(\S+), p=(\S+), (\d+) canary and (\d+) baseline pods`)

func TestBaseline(t *testing.T) {
	t.Parallel()

	// A canary three times as bad as the stable pods fails on the baseline
	// although its absolute error rate is within the threshold.
	t.Run("max relative increase", func(t *testing.T) {
		t.Parallel()
		const namespace = "baseline-relative"
		serve(namespace, "canary", 10, 0.03)
		stable := []string{"stable-1", "stable-2"}
		for _, pod := range stable {
			serve(namespace, pod, 10, 0.01)
		}
		metric := errorRateMetric(0.05)
		metric.Baseline = &v1alpha1.BaselineComparison{MaxRelativeIncrease: ptr.To(50.0)}
		target := canaryOf(namespace, "canary")
		target.StablePods = stable
		measured(t, querier, metric, target, v1alpha1.AnalysisFailed, func(g gomega.Gomega, m v1alpha1.Measurement) {
			near(g, "value", m.Value, 0.03)
			near(g, "baseline value", m.BaselineValue, 0.01)
			g.Expect(m.Message).To(gomega.ContainSubstring(m.Value + " within [-Inf, 0.05]"))
			g.Expect(m.Message).To(gomega.ContainSubstring(m.Value + " > baseline " + m.BaselineValue + " + 50%"))
		})
	})

	mannWhitney := func(namespace string, canary, stable []float64) (v1alpha1.AnalysisMetric, analysis.Target) {
		target := analysis.Target{Namespace: namespace, Name: "agent"}
		for i, r := range canary {
			pod := fmt.Sprintf("canary-%d", i)
			serve(namespace, pod, 10, r)
			target.CanaryPods = append(target.CanaryPods, pod)
		}
		for i, r := range stable {
			pod := fmt.Sprintf("stable-%d", i)
			serve(namespace, pod, 10, r)
			target.StablePods = append(target.StablePods, pod)
		}
		metric := errorRateMetric(1)
		metric.ThresholdRange = nil
		metric.Baseline = &v1alpha1.BaselineComparison{MannWhitney: &v1alpha1.MannWhitneyTest{
			Confidence: ptr.To(0.95), Direction: v1alpha1.DirectionIncrease,
		}}
		return metric, target
	}
	stable := []float64{0.010, 0.011, 0.012, 0.013, 0.014, 0.015, 0.016, 0.017, 0.018, 0.019}
	// summary checks that every pod was ranked, with U (pairs where the
	// canary pod is worse) as the per-pod values give it.
	summary := func(g gomega.Gomega, m v1alpha1.Measurement, u string) float64 {
		parts := mannWhitneySummary.FindStringSubmatch(m.Message)
		g.Expect(parts).NotTo(gomega.BeNil(), m.Message)
		g.Expect(parts[1]).To(gomega.Equal(u), m.Message)
		g.Expect(parts[3:]).To(gomega.Equal([]string{"4", "10"}), m.Message)
		p, err := strconv.ParseFloat(parts[2], 64)
		g.Expect(err).NotTo(gomega.HaveOccurred(), m.Message)
		return p
	}

	t.Run("mann-whitney increase", func(t *testing.T) {
		t.Parallel()
		metric, target := mannWhitney("baseline-increase", []float64{0.06, 0.065, 0.07, 0.08}, stable)
		measured(t, querier, metric, target, v1alpha1.AnalysisFailed, func(g gomega.Gomega, m v1alpha1.Measurement) {
			g.Expect(summary(g, m, "40")).To(gomega.BeNumerically("<", 0.05), m.Message)
		})
	})
	t.Run("mann-whitney same distribution", func(t *testing.T) {
		t.Parallel()
		metric, target := mannWhitney("baseline-same", []float64{0.0105, 0.0135, 0.0155, 0.0185}, stable)
		measured(t, querier, metric, target, v1alpha1.AnalysisSuccessful, func(g gomega.Gomega, m v1alpha1.Measurement) {
			g.Expect(summary(g, m, "20")).To(gomega.BeNumerically(">", 0.05), m.Message)
		})
	})
}

// A query that returns one series per pod where one value was expected is an
// Error that names the series, so the user sees which aggregation is missing.
func TestUnaggregatedQueryNamesItsSeries(t *testing.T) {
	t.Parallel()
	const namespace = "unaggregated"
	serve(namespace, "left", 10, 0.1)
	serve(namespace, "right", 10, 0.2)
	metric := queryMetric(
		`rate(`+requestMetric+`{namespace="{{.Namespace}}",pod=~"{{.CanaryPodRegex}}",code="500"}[{{.Window}}])`, 100)
	measured(t, querier, metric, canaryOf(namespace, "left", "right"), v1alpha1.AnalysisError,
		func(g gomega.Gomega, m v1alpha1.Measurement) {
			g.Expect(m.Message).To(gomega.ContainSubstring("query returned 2 series where one was expected"))
			g.Expect(m.Message).To(gomega.ContainSubstring(`pod="left"`))
			g.Expect(m.Message).To(gomega.ContainSubstring(`pod="right"`))
		})
}

// A query Prometheus cannot parse is an Error quoting Prometheus's own
// bad_data message, which points at the mistake.
func TestSyntaxErrorQuotesPrometheus(t *testing.T) {
	t.Parallel()
	g := gomega.NewWithT(t)
	ctx := t.Context()
	metric := queryMetric(`sum(rate(`+requestMetric+`{namespace="{{.Namespace}}"}[{{.Window}}])`, 1)
	vars := analysis.Vars{Target: canaryOf("syntax", "canary"), Interval: scrapeInterval, Window: window}
	now := time.Now()
	m := analysis.Measure(ctx, querier, metric, vars, now)
	g.Expect(m.Phase).To(gomega.Equal(v1alpha1.AnalysisError), m.Message)

	promAPI, err := shared.API()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	_, _, _, err = promAPI.Query(ctx, m.Query, now)
	var badData *promv1.Error
	g.Expect(errors.As(err, &badData)).To(gomega.BeTrue(), "Prometheus accepted %s: %v", m.Query, err)
	g.Expect(badData.Type).To(gomega.Equal(promv1.ErrBadData))
	g.Expect(badData.Msg).To(gomega.ContainSubstring("parse error"))
	g.Expect(m.Message).To(gomega.Equal("query rejected by Prometheus: " + badData.Msg))
}
