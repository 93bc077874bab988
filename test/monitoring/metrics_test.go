package monitoring

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/go-logr/logr"
	"github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/extendeddaemonset/extendeddaemonset/analysis/web"
	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/envkubelet"
	promharness "github.com/extendeddaemonset/extendeddaemonset/test/harness/prometheus"
)

const (
	eventually = 2 * time.Minute
	polling    = 200 * time.Millisecond
	// settle bounds the wait for series the last reconciles write after the
	// status the test waits for.
	settle = 20 * time.Second
)

// Labels Prometheus adds to every scraped series, which no exporter sets.
var targetLabels = []string{"job", "instance"}

// Labels whose values in the queries are the dashboard's sample values,
// not values of the exporter's.
var sampleLabels = []string{"namespace", "name"}

// Every metric the alerts and the dashboard select is one the real
// controllers export, with the labels they match on, and every fixed label
// value they match is one the controllers were seen to export, while two
// ExtendedDaemonSets go through what the alerts and panels are about: a
// canary measured by an analysis and promoted, a rolling update, and a
// canary whose analysis errors, waiting for a person, then failed, whose
// webhooks fail. `up` comes from Prometheus, not the controllers.
func TestReferencedMetricsAreExported(t *testing.T) {
	ctx := t.Context()
	prom := startPrometheus(t)
	refs := references(t, prom)

	env, cfg, err := harness.StartEnvtest(repoPath("config/crd/bases"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	// The scenario's webhook receivers listen on loopback.
	webHosts, err := web.ParseHostPolicy([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	ctrls, err := harness.StartControllers(ctx, cfg, controllers.Options{WebHosts: webHosts}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ctrls.Stop(); err != nil {
			t.Errorf("stopping the controllers: %v", err)
		}
	})
	c, err := client.New(cfg, client.Options{Scheme: harness.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	seen := watchRegistry(t, ctrlmetrics.Registry)
	// Series that exist only for a moment (a paused canary) are caught by
	// the sampling; the check also runs when the scenario fails half-way,
	// so that what is missing is always named.
	defer checkReferences(t, refs, seen)

	runScenario(ctx, t, c, prom)
}

// runScenario promotes the canary of one ExtendedDaemonSet, past a gate
// that answers, and fails the canary of another, whose notification
// receiver is down, on two nodes.
func runScenario(ctx context.Context, t *testing.T, c client.Client, prom *promharness.Server) {
	g := gomega.NewWithT(t)
	g.SetDefaultEventuallyTimeout(eventually)
	g.SetDefaultEventuallyPollingInterval(polling)
	const ns = "monitoring"
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(gomega.Succeed())
	for _, name := range []string{"node-a", "node-b"} {
		_, err := envkubelet.CreateNode(ctx, c, name, nil)
		g.Expect(err).NotTo(gomega.HaveOccurred())
	}
	kubeletCtx, stopKubelet := context.WithCancel(ctx)
	kubeletDone := make(chan struct{})
	go func() { defer close(kubeletDone); envkubelet.Run(kubeletCtx, c, client.InNamespace(ns)) }()
	t.Cleanup(func() { stopKubelet(); <-kubeletDone })

	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(receiver.Close)
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	promoted := newEDS(ns, "promoted", &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(1)),
		Duration: &metav1.Duration{Duration: 2 * time.Second},
		Analysis: analysisOn(prom, v1alpha1.AnalysisMetric{
			Name: "zero", Query: "vector(0)", ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(0.0)},
		}),
		Webhooks: []v1alpha1.CanaryWebhook{{Name: "smoke", Type: v1alpha1.WebhookConfirmPromotion,
			WebRequest: v1alpha1.WebRequest{URL: receiver.URL + "/smoke"}, Interval: &metav1.Duration{Duration: 5 * time.Second}}},
	})
	failed := newEDS(ns, "failed", &v1alpha1.CanaryStrategy{
		Replicas:       ptr.To(intstr.FromInt32(1)),
		ValidationMode: v1alpha1.CanaryValidationManual,
		// A query Prometheus refuses: every measurement is an Error.
		Analysis: analysisOn(prom, v1alpha1.AnalysisMetric{
			Name: "broken", Query: "sum(", ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(0.0)},
		}),
		// A receiver that is down: every delivery fails.
		Webhooks: []v1alpha1.CanaryWebhook{
			{Name: "events", Type: v1alpha1.WebhookEvent, WebRequest: v1alpha1.WebRequest{URL: down.URL + "/events"}},
			{Name: "rollback", Type: v1alpha1.WebhookRollback, WebRequest: v1alpha1.WebRequest{URL: down.URL + "/rollback"}},
		},
	})
	stable := map[string]string{}
	for _, eds := range []*v1alpha1.ExtendedDaemonSet{promoted, failed} {
		g.Expect(c.Create(ctx, eds)).To(gomega.Succeed())
		stable[eds.Name] = waitRolledOut(ctx, g, c, eds, "")
		update(ctx, g, c, eds, func(e *v1alpha1.ExtendedDaemonSet) { e.Spec.Template.Spec.Containers[0].Image = "agent:v2" })
	}

	waitRolledOut(ctx, g, c, promoted, stable[promoted.Name])

	var canaryRS string
	g.Eventually(func(g gomega.Gomega) {
		e := get(ctx, g, c, failed)
		g.Expect(e.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(e.Status.Canary.Paused).To(gomega.BeTrue(), "a manual canary waits for a person")
		g.Expect(e.Status.Canary.Analysis).NotTo(gomega.BeNil())
		g.Expect(e.Status.Canary.Analysis.Metrics).To(gomega.ContainElement(
			gomega.HaveField("Error", gomega.BeNumerically(">", 0))), "no measurement of the broken query erred")
		canaryRS = e.Status.Canary.ReplicaSet
	}).Should(gomega.Succeed())
	update(ctx, g, c, failed, func(e *v1alpha1.ExtendedDaemonSet) {
		if e.Annotations == nil {
			e.Annotations = map[string]string{}
		}
		e.Annotations[v1alpha1.CanaryFailedAnnotation] = canaryRS
	})
	g.Eventually(func(g gomega.Gomega) {
		e := get(ctx, g, c, failed)
		g.Expect(e.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(e.Status.Canary.Failed).To(gomega.BeTrue())
		g.Expect(conditions.GetReason(e, v1alpha1.StalledCondition)).To(gomega.Equal(v1alpha1.ReasonCanaryFailed))
	}).Should(gomega.Succeed())
}

func newEDS(namespace, name string, canary *v1alpha1.CanaryStrategy) *v1alpha1.ExtendedDaemonSet {
	return &v1alpha1.ExtendedDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: v1alpha1.ExtendedDaemonSetSpec{
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "agent:v1"}}},
			},
			Strategy: v1alpha1.ExtendedDaemonSetStrategy{Canary: canary},
		},
	}
}

// analysisOn measures metric on prom every second from the first second.
func analysisOn(prom *promharness.Server, metric v1alpha1.AnalysisMetric) *v1alpha1.CanaryAnalysis {
	return &v1alpha1.CanaryAnalysis{
		Provider:     v1alpha1.AnalysisProvider{Prometheus: &v1alpha1.PrometheusProvider{Address: prom.URL()}},
		Interval:     &metav1.Duration{Duration: time.Second},
		InitialDelay: &metav1.Duration{Duration: time.Second},
		Metrics:      []v1alpha1.AnalysisMetric{metric},
	}
}

// waitRolledOut waits until eds is Ready on an active replica set other
// than previous, with no canary, and returns that replica set.
func waitRolledOut(ctx context.Context, g *gomega.WithT, c client.Client, eds *v1alpha1.ExtendedDaemonSet, previous string) string {
	var active string
	g.Eventually(func(g gomega.Gomega) {
		e := get(ctx, g, c, eds)
		g.Expect(e.Status.ObservedGeneration).To(gomega.Equal(e.Generation))
		g.Expect(e.Status.ActiveReplicaSet).NotTo(gomega.BeElementOf("", previous))
		g.Expect(e.Status.Canary).To(gomega.BeNil())
		g.Expect(conditions.IsReady(e)).To(gomega.BeTrue(), "%s not Ready: %+v", e.Name, e.Status.Conditions)
		active = e.Status.ActiveReplicaSet
	}).Should(gomega.Succeed())
	return active
}

func get(ctx context.Context, g gomega.Gomega, c client.Client, eds *v1alpha1.ExtendedDaemonSet) *v1alpha1.ExtendedDaemonSet {
	live := &v1alpha1.ExtendedDaemonSet{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(eds), live)).To(gomega.Succeed())
	return live
}

func update(ctx context.Context, g *gomega.WithT, c client.Client, eds *v1alpha1.ExtendedDaemonSet, change func(*v1alpha1.ExtendedDaemonSet)) {
	g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(eds), eds); err != nil {
			return err
		}
		change(eds)
		return c.Update(ctx, eds)
	})).To(gomega.Succeed())
}

// reference is one use of a metric by a rule or a panel.
type reference struct {
	where    string
	matchers []matcher
}

// references parses every expression with Prometheus and returns the uses
// of each metric name.
func references(t *testing.T, prom *promharness.Server) map[string][]reference {
	t.Helper()
	refs := map[string][]reference{}
	for _, e := range allExpressions(t) {
		q, err := substitute(e.query)
		if err != nil {
			t.Errorf("%s: %v", e.where, err)
			continue
		}
		selectors, err := selectorsOf(t.Context(), prom, q)
		if err != nil {
			t.Errorf("%s: %v", e.where, err)
			continue
		}
		for _, s := range selectors {
			refs[s.metricName()] = append(refs[s.metricName()], reference{where: e.where, matchers: s.Matchers})
		}
	}
	return refs
}

// family is what was seen of one metric family: its type, and the values
// of each label across every gathering.
type family struct {
	typ    dto.MetricType
	labels map[string]map[string]bool
}

// exported accumulates what a registry exports over time.
type exported struct {
	mu       sync.Mutex
	families map[string]*family
	err      error

	stopOnce sync.Once
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// watchRegistry gathers reg until stop or the end of the test.
func watchRegistry(t *testing.T, reg prometheus.Gatherer) *exported {
	ctx, cancel := context.WithCancel(context.Background())
	e := &exported{families: map[string]*family{}, cancel: cancel}
	t.Cleanup(e.stop)
	e.wg.Go(func() {
		ticker := time.NewTicker(50 * time.Millisecond)
		defer ticker.Stop()
		for {
			e.gather(reg)
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	})
	return e
}

// stop ends the gathering and waits for it; the data stay.
func (e *exported) stop() {
	e.stopOnce.Do(func() {
		e.cancel()
		e.wg.Wait()
	})
}

func (e *exported) gather(reg prometheus.Gatherer) {
	mfs, err := reg.Gather()
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		e.err = err
	}
	for _, mf := range mfs {
		f := e.families[mf.GetName()]
		if f == nil {
			f = &family{typ: mf.GetType(), labels: map[string]map[string]bool{}}
			e.families[mf.GetName()] = f
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if f.labels[l.GetName()] == nil {
					f.labels[l.GetName()] = map[string]bool{}
				}
				f.labels[l.GetName()][l.GetValue()] = true
			}
		}
	}
}

// lookup finds the family a selected name belongs to, histogram and
// summary series included, and the labels those series add.
func (e *exported) lookup(name string) (*family, []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if f := e.families[name]; f != nil {
		return f, nil
	}
	for suffix, types := range map[string][]dto.MetricType{
		"_bucket": {dto.MetricType_HISTOGRAM},
		"_sum":    {dto.MetricType_HISTOGRAM, dto.MetricType_SUMMARY},
		"_count":  {dto.MetricType_HISTOGRAM, dto.MetricType_SUMMARY},
	} {
		base, ok := strings.CutSuffix(name, suffix)
		if f := e.families[base]; ok && f != nil && slices.Contains(types, f.typ) {
			if suffix == "_bucket" {
				return f, []string{"le"}
			}
			return f, nil
		}
	}
	return nil, nil
}

// missing lists the referenced names no family answers to.
func (e *exported) missing(refs map[string][]reference) []string {
	var out []string
	for name := range refs {
		if f, _ := e.lookup(name); f == nil && name != "up" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// literalAlternatives matches a regular expression that is only a choice
// of literal values, whose values can be checked one by one.
var literalAlternatives = regexp.MustCompile(`^[A-Za-z0-9_.:-]+(\|[A-Za-z0-9_.:-]+)*$`)

// checkReferences waits for every referenced metric to be exported, then
// reports the names, labels and values the controllers never exported.
func checkReferences(t *testing.T, refs map[string][]reference, seen *exported) {
	deadline := time.Now().Add(settle)
	for len(seen.missing(refs)) > 0 && time.Now().Before(deadline) && !t.Failed() {
		time.Sleep(polling)
	}
	seen.stop()
	seen.gather(ctrlmetrics.Registry)
	if seen.err != nil {
		t.Errorf("gathering the controllers' metrics: %v", seen.err)
	}
	if missing := seen.missing(refs); len(missing) > 0 {
		var uses []string
		for _, name := range missing {
			for _, r := range refs[name] {
				uses = append(uses, fmt.Sprintf("  %s: %s", name, r.where))
			}
		}
		t.Errorf("the controllers do not export %d metrics the rules or the dashboard use: %s\n%s",
			len(missing), strings.Join(missing, ", "), strings.Join(uses, "\n"))
	}
	for name, uses := range refs {
		f, implied := seen.lookup(name)
		if f == nil {
			continue
		}
		for _, r := range uses {
			for _, m := range r.matchers {
				if m.Name == "__name__" || slices.Contains(targetLabels, m.Name) || slices.Contains(implied, m.Name) {
					continue
				}
				values, ok := f.labels[m.Name]
				if !ok {
					t.Errorf("%s: %s has no label %s", r.where, name, m.Name)
					continue
				}
				if slices.Contains(sampleLabels, m.Name) {
					continue
				}
				if unseen := unseenValues(m, values); len(unseen) > 0 {
					t.Errorf("%s: %s{%s%s%q}: the controllers never exported %s=%v (seen: %v)",
						r.where, name, m.Name, m.Type, m.Value, m.Name, unseen, sortedKeys(values))
				}
			}
		}
	}
}

// unseenValues returns the literal values a matcher names that were never
// exported; a real regular expression is not checked.
func unseenValues(m matcher, values map[string]bool) []string {
	var literals []string
	switch m.Type {
	case "=", "!=":
		literals = []string{m.Value}
	case "=~", "!~":
		if literalAlternatives.MatchString(m.Value) {
			literals = strings.Split(m.Value, "|")
		}
	}
	var out []string
	for _, v := range literals {
		if !values[v] {
			out = append(out, v)
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
