package e2e

// Prometheus fails an analysis in many ways: down, slow, rejecting a query,
// answering with nothing or NaN, losing series it had. Each fault here is
// made by the real Prometheus where it can make it, and by a proxy in front
// of it where only a proxy can (refusing connections while Prometheus goes
// on scraping, answering after the client gave up). Whatever the fault, a
// canary measured without trustworthy data is never promoted: it pauses
// once the fault outlasts what the spec tolerates, stays paused past its
// duration, and goes on once the data is back.

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/prometheus"
)

const (
	// The limits differ, so that a fault paused by the other one shows.
	faultErrorLimit        = 2
	faultInconclusiveLimit = 1
	// faultTimeout bounds one query; the proxy holds a slow answer far
	// longer.
	faultTimeout = time.Second
	// midwayDuration leaves a canary whose fault comes after a first
	// Successful measurement room to be measured before its duration ends:
	// a Successful analysis past it promotes at once.
	midwayDuration = 12 * time.Second
	// fromStartDuration is the duration of a canary faulty from its start.
	fromStartDuration = 6 * time.Second
)

// prometheusFault is one way Prometheus fails the analysis of a canary
// measuring the error rate of its pods.
type prometheusFault struct {
	name string
	// metric is what is measured; the errorRate preset when nil.
	metric *v1alpha1.AnalysisMetric
	// midway: the fault begins once the canary was measured Successful,
	// rather than before the canary starts.
	midway bool
	// phase is the verdict of the measurements while the fault lasts, and
	// of the analysis once it lasts beyond its limit.
	phase v1alpha1.AnalysisPhase
	// says is in the message of the newest of those measurements.
	says string
	// begin starts the fault, heal ends it.
	begin, heal func(*faultRig)
}

// faultRig is what a fault is made with.
type faultRig struct {
	s       *scenario
	metrics *metricsStack
	proxy   *prometheus.FaultProxy
	canary  *analyzedCanary
}

// manyToMany divides per namespace where each side holds a series per
// canary pod and code: valid PromQL, which Prometheus refuses to evaluate.
const manyToMany = `sum(rate(http_requests_total{namespace="{{.Namespace}}",pod=~"{{.CanaryPodRegex}}",code=~"5.."}[{{.Window}}])` +
	` / on(namespace) rate(http_requests_total{namespace="{{.Namespace}}",pod=~"{{.CanaryPodRegex}}"}[{{.Window}}]))`

// errorRatio is the query manyToMany meant to write.
const errorRatio = `sum(rate(http_requests_total{namespace="{{.Namespace}}",pod=~"{{.CanaryPodRegex}}",code=~"5.."}[{{.Window}}]))` +
	` / sum(rate(http_requests_total{namespace="{{.Namespace}}",pod=~"{{.CanaryPodRegex}}"}[{{.Window}}]))`

var prometheusFaults = []prometheusFault{{
	name: "ServerDown", midway: true, phase: v1alpha1.AnalysisError, says: "connection refused",
	begin: func(r *faultRig) { r.s.g.Expect(r.proxy.Refuse()).To(gomega.Succeed()) },
	heal:  func(r *faultRig) { r.s.g.Expect(r.proxy.Accept()).To(gomega.Succeed()) },
}, {
	// No measurement ever gets an answer.
	name: "SlowerThanTheTimeout", phase: v1alpha1.AnalysisError,
	says:  fmt.Sprintf("no answer within the provider timeout of %s", faultTimeout),
	begin: func(r *faultRig) { r.proxy.Delay(time.Minute) },
	heal:  func(r *faultRig) { r.proxy.Delay(0) },
}, {
	// Every measurement is refused; fixing the query is what heals it.
	name: "QueryError", phase: v1alpha1.AnalysisError, says: "many-to-many matching not allowed",
	metric: &v1alpha1.AnalysisMetric{Name: "error-rate", Query: manyToMany, ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(0.05)}},
	begin:  func(*faultRig) {}, // the query is the fault
	heal: func(r *faultRig) {
		r.s.update(r.canary.eds, func(e *v1alpha1.ExtendedDaemonSet) { e.Spec.Strategy.Canary.Analysis.Metrics[0].Query = errorRatio })
	},
}, {
	// The canary pods expose no request counter at all.
	name: "EmptyResult", phase: v1alpha1.AnalysisInconclusive, says: "returned no data",
	begin: func(r *faultRig) { r.metrics.setTraffic(onCanary(nil)) },
	heal:  func(r *faultRig) { r.metrics.setTraffic(onCanary(requests(10, 0))) },
}, {
	// The canary pods serve no request: errors / requests is 0 / 0.
	name: "NaN", phase: v1alpha1.AnalysisInconclusive, says: "returned NaN",
	begin: func(r *faultRig) { r.metrics.setTraffic(onCanary(requests(0, 0))) },
	heal:  func(r *faultRig) { r.metrics.setTraffic(onCanary(requests(10, 0))) },
}, {
	// The canary pods' counters were scraped, then are no longer exposed:
	// Prometheus marks them stale.
	name: "SeriesVanish", midway: true, phase: v1alpha1.AnalysisInconclusive, says: "returned no data",
	begin: func(r *faultRig) { r.metrics.setTraffic(onCanary(nil)) },
	heal:  func(r *faultRig) { r.metrics.setTraffic(onCanary(requests(10, 0))) },
}}

func TestPrometheusFault(t *testing.T) {
	for _, fault := range prometheusFaults {
		t.Run(fault.name, func(t *testing.T) { runPrometheusFault(t, fault) })
	}
}

// runPrometheusFault starts a canary analysed through the proxy, makes
// the fault and checks, over every version of the ExtendedDaemonSet the API
// server stored, that the canary is neither promoted nor judged Successful
// on it, and pauses exactly when the fault outlasts its limit; then it
// heals the fault and waits for the promotion.
func runPrometheusFault(t *testing.T, fault prometheusFault) {
	s := newScenario(t)
	r := &faultRig{s: s, metrics: s.startMetrics()}
	proxy, err := prometheus.StartFaultProxy(r.metrics.prom.URL())
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	t.Cleanup(func() { _ = proxy.Close() })
	r.proxy = proxy
	r.metrics.setTraffic(onCanary(requests(10, 0)))

	metric := errorRateMetric("error-rate", 0.05)
	if fault.metric != nil {
		metric = *fault.metric
	}
	analysis := r.metrics.analysisOf(metric)
	analysis.Provider.Prometheus = &v1alpha1.PrometheusProvider{Address: proxy.URL(), Timeout: &metav1.Duration{Duration: faultTimeout}}
	analysis.Interval = &metav1.Duration{Duration: time.Second}
	analysis.InitialDelay = &metav1.Duration{Duration: 2 * time.Second}
	analysis.ConsecutiveErrorLimit = ptr.To[int32](faultErrorLimit)
	analysis.InconclusiveLimit = ptr.To[int32](faultInconclusiveLimit)

	duration := fromStartDuration
	if fault.midway {
		duration = midwayDuration
	} else {
		fault.begin(r)
	}
	history := s.recordHistory("agent")
	r.canary = s.startAnalyzedCanary(duration, analysis)
	c := r.canary
	if fault.midway {
		// The data was there, and judged, before the fault.
		s.expectAnalysis(c, v1alpha1.AnalysisSuccessful, metav1.ConditionTrue)
		fault.begin(r)
	}

	reason, limit := "Analysis"+string(fault.phase), fmt.Sprintf("consecutiveErrorLimit %d", faultErrorLimit)
	if fault.phase == v1alpha1.AnalysisInconclusive {
		limit = fmt.Sprintf("inconclusiveLimit %d", faultInconclusiveLimit)
	}
	s.expectPausedUnlessPromoted(c, reason)
	paused := s.expectAnalysis(c, fault.phase, metav1.ConditionFalse)
	s.g.Expect(apimeta.FindStatusCondition(paused.Status.Conditions, v1alpha1.AnalysisCondition)).To(
		gomega.HaveField("Message", gomega.And(gomega.ContainSubstring(metric.Name), gomega.ContainSubstring(limit))))
	s.expectCanaryHolds(c.eds, s.nodeNames(), "v1", "v2", canaryPaused, reason, duration)
	s.expectWarning(c.eds, reason, c.replicaSet)
	s.g.Expect(s.eventCount(c.eds, "CanaryPromoted")).To(gomega.BeZero(), "promoted on %s", fault.name)

	last := s.get(c.eds)
	result := last.Status.Canary.Analysis.Metrics[0]
	s.g.Expect(result.Measurements[len(result.Measurements)-1]).To(gomega.And(
		gomega.HaveField("Phase", fault.phase), gomega.HaveField("Message", gomega.ContainSubstring(fault.says))))
	for _, version := range history.until(s.g, last.ResourceVersion) {
		checkFaultyVersion(s.g, version, c, fault)
	}

	fault.heal(r)
	s.expectPromoted(c.eds, "v2", s.nodeNames(), c.replicaSet)
	s.expectEvent(c.eds, v1alpha1.ReasonAnalysisSuccessful, c.replicaSet)
}

// checkFaultyVersion checks one version of the ExtendedDaemonSet stored
// before the fault was healed.
func checkFaultyVersion(g gomega.Gomega, eds *v1alpha1.ExtendedDaemonSet, c *analyzedCanary, fault prometheusFault) {
	at := fmt.Sprintf("version %s", eds.ResourceVersion)
	g.Expect(eds.Status.ActiveReplicaSet).NotTo(gomega.Equal(c.replicaSet), "%s: promoted on %s", at, fault.name)
	canary := eds.Status.Canary
	if canary == nil || canary.ReplicaSet != c.replicaSet || canary.Analysis == nil {
		return
	}
	a := canary.Analysis
	if !fault.midway {
		// Every measurement met the fault: none may judge the canary.
		g.Expect(a.Phase).NotTo(gomega.Equal(v1alpha1.AnalysisSuccessful), "%s: %s", at, a.Message)
	}
	for _, m := range a.Metrics {
		if !fault.midway {
			g.Expect(m.Successful+m.Failed).To(gomega.BeZero(), "%s: %s judged without data: %s", at, m.Name, m.Message)
		}
		if a.Phase == v1alpha1.AnalysisSuccessful {
			g.Expect(m.Measurements).NotTo(gomega.BeEmpty(), "%s: %s Successful unmeasured", at, m.Name)
			newest := m.Measurements[len(m.Measurements)-1]
			g.Expect(newest.Phase).To(gomega.Equal(v1alpha1.AnalysisSuccessful), "%s: Successful on %s", at, newest.Message)
		}
	}
	// The canary pauses for the analysis once a run of errors or of
	// inconclusive measurements exceeds its limit, and only then.
	wantPaused := ""
	for _, m := range a.Metrics {
		switch {
		case m.ConsecutiveError > faultErrorLimit:
			wantPaused = v1alpha1.ReasonAnalysisError
		case m.ConsecutiveInconclusive > faultInconclusiveLimit && wantPaused == "":
			wantPaused = v1alpha1.ReasonAnalysisInconclusive
		}
	}
	gotPaused := ""
	if canary.Paused && (canary.Reason == v1alpha1.ReasonAnalysisError || canary.Reason == v1alpha1.ReasonAnalysisInconclusive) {
		gotPaused = canary.Reason
	}
	g.Expect(gotPaused).To(gomega.Equal(wantPaused), "%s: analysis %s: %s", at, a.Phase, a.Message)
}

// expectPausedUnlessPromoted waits until the analysis pauses the canary
// for reason, and fails at once if the canary is promoted instead.
func (s *scenario) expectPausedUnlessPromoted(c *analyzedCanary, reason string) {
	s.t.Helper()
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(c.eds)
		if latest.Status.ActiveReplicaSet == c.replicaSet {
			gomega.StopTrying("the canary was promoted").Now()
		}
		g.Expect(latest.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(latest.Status.Canary.Paused).To(gomega.BeTrue(), "paused")
		g.Expect(latest.Status.Canary.Reason).To(gomega.Equal(reason))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
}

// onCanary gives the pods of the canary template (v2) rates of their own,
// and every other pod steady traffic without errors.
func onCanary(rates map[string]float64) func(*corev1.Pod) map[string]float64 {
	return func(pod *corev1.Pod) map[string]float64 {
		if pod.Spec.Containers[0].Image == agentImage("v2") {
			return rates
		}
		return requests(10, 0)
	}
}

// edsHistory is every version of one ExtendedDaemonSet the API server
// stored from its start on, as a watch delivers them: a state too short for
// a poller to see is in it.
type edsHistory struct {
	mu       sync.Mutex
	versions []*v1alpha1.ExtendedDaemonSet
	err      error
}

// recordHistory records the ExtendedDaemonSet name of the scenario's
// namespace until the end of the test.
func (s *scenario) recordHistory(name string) *edsHistory {
	s.t.Helper()
	ctx, cancel := context.WithCancel(s.ctx)
	client := env.Dynamic.Resource(edsResource).Namespace(s.ns)
	selector := fields.OneTermEqualSelector("metadata.name", name).String()
	list, err := client.List(ctx, metav1.ListOptions{FieldSelector: selector})
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, list.GetResourceVersion(), &toolscache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = selector
			return client.Watch(ctx, opts)
		},
	})
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	h := &edsHistory{}
	for i := range list.Items {
		h.add(&list.Items[i])
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range rw.ResultChan() {
			switch u, ok := ev.Object.(*unstructured.Unstructured); {
			case ev.Type == watch.Error:
				h.fail(fmt.Errorf("ExtendedDaemonSet watch failed: %w", apierrors.FromObject(ev.Object)))
			case ok && (ev.Type == watch.Added || ev.Type == watch.Modified):
				h.add(u)
			}
		}
	}()
	s.t.Cleanup(func() { cancel(); rw.Stop(); <-done })
	return h
}

func (h *edsHistory) add(u *unstructured.Unstructured) {
	eds := &v1alpha1.ExtendedDaemonSet{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, eds); err != nil {
		h.fail(err)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.versions = append(h.versions, eds)
}

func (h *edsHistory) fail(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.err = err
}

// until waits for the version resourceVersion and returns it with every
// version before it.
func (h *edsHistory) until(g gomega.Gomega, resourceVersion string) []*v1alpha1.ExtendedDaemonSet {
	var versions []*v1alpha1.ExtendedDaemonSet
	g.Eventually(func(g gomega.Gomega) {
		h.mu.Lock()
		defer h.mu.Unlock()
		g.Expect(h.err).NotTo(gomega.HaveOccurred())
		i := slices.IndexFunc(h.versions, func(e *v1alpha1.ExtendedDaemonSet) bool { return e.ResourceVersion == resourceVersion })
		g.Expect(i).To(gomega.BeNumerically(">=", 0), "version %s not seen yet", resourceVersion)
		versions = slices.Clone(h.versions[:i+1])
	}).WithTimeout(time.Minute).WithPolling(pollInterval).Should(gomega.Succeed())
	return versions
}
