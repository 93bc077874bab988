package controllers

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// fakePrometheus answers every instant query with one sample whose value
// the test sets, and remembers the queries.
type fakePrometheus struct {
	*httptest.Server
	mu      sync.Mutex
	value   string
	queries []string
}

func newFakePrometheus(t *testing.T) *fakePrometheus {
	p := &fakePrometheus{value: "0"}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		p.mu.Lock()
		p.queries = append(p.queries, r.Form.Get("query"))
		value := p.value
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{
			"resultType": "vector",
			"result":     []any{map[string]any{"metric": map[string]string{}, "value": []any{float64(time.Now().Unix()), value}}},
		}})
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *fakePrometheus) set(value string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.value = value
}

// queried reports whether a query since the last call named every one of
// names.
func (p *fakePrometheus) queried(names ...string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	defer func() { p.queries = nil }()
	return slices.ContainsFunc(p.queries, func(q string) bool { return containsAll(q, names) })
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// With a canary analysis and a Sequential topology that bakes, the bake of
// each domain is judged by the canary's metrics on the updated pods: a
// Successful verdict lets the next domain start, a Failed one halts the
// rollout (Stalled, DomainBakeFailed, the next domain untouched, nothing
// rolled back) until a retry, which judges the bake again.
func TestBakeAnalysisGatesTheNextDomain(t *testing.T) {
	s := newScenario(t)
	prom := newFakePrometheus(t)
	nodes := []*corev1.Node{
		s.createNode("a", map[string]string{zoneLabel: "zone-a"}),
		s.createNode("b", map[string]string{zoneLabel: "zone-b"}),
		s.createNode("c", map[string]string{zoneLabel: "zone-c"}),
	}
	eds := s.newEDS("agent", imageV1)
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(3))
	eds.Spec.Strategy.RollingUpdate.Topology = &v1alpha1.RollingUpdateTopology{
		Key: zoneLabel, DomainBakeTime: &metav1.Duration{Duration: 2 * time.Second},
	}
	maxErrors := 0.5
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(1)), ValidationMode: v1alpha1.CanaryValidationManual,
		NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{zoneLabel: "zone-a"}},
		Analysis: &v1alpha1.CanaryAnalysis{
			Provider: v1alpha1.AnalysisProvider{Prometheus: &v1alpha1.PrometheusProvider{Address: prom.URL}},
			Interval: &metav1.Duration{Duration: time.Second},
			Metrics: []v1alpha1.AnalysisMetric{{
				Name: "errors", Query: `errors{pod=~"{{ .CanaryPodRegex }}"}`, ThresholdRange: &v1alpha1.ThresholdRange{Max: &maxErrors},
			}},
		},
	}
	_, stable := s.createRolledOut(eds, nodes...)

	// The canary, on zone-a's node, validated by a person.
	s.setImage(eds, imageV2)
	var second string
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.Canary).NotTo(gomega.BeNil())
		second = e.Status.Canary.ReplicaSet
	}).Should(gomega.Succeed())
	canaryPod := s.replaceOnNode(stable[nodes[0].Name], second)
	s.annotate(eds, v1alpha1.CanaryValidatedAnnotation, second)

	// zone-a bakes, judged on the pods of the new replica set, passes, and
	// zone-b starts.
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(second))
		g.Expect(e.Status.Bake).NotTo(gomega.BeNil())
		g.Expect(e.Status.Bake.Domain).To(gomega.Equal("zone-a"))
	}).Should(gomega.Succeed())
	s.g.Eventually(func() bool { return prom.queried(canaryPod.Name) }).Should(gomega.BeTrue(), "the bake measures the new pods")
	podB := s.replaceOnNode(stable[nodes[1].Name], second)
	e := s.getEDS(s.g, eds.Name)
	s.g.Expect(e.Status.Bake.PassedThrough).To(gomega.Equal("zone-a"))
	s.g.Expect(e.Status.Domains).To(gomega.HaveLen(3))
	s.g.Expect(e.Status.Domains[0]).To(gomega.And(gomega.HaveField("Name", "zone-a"), gomega.HaveField("Analysis", v1alpha1.AnalysisSuccessful)))

	// zone-b bakes while its pods serve errors: the bake fails, the
	// rollout halts with zone-c untouched.
	prom.set("1")
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.Bake).NotTo(gomega.BeNil())
		g.Expect(e.Status.Bake.Domain).To(gomega.Equal("zone-b"))
		g.Expect(e.Status.Bake.Analysis).NotTo(gomega.BeNil())
		g.Expect(e.Status.Bake.Analysis.Phase).To(gomega.Equal(v1alpha1.AnalysisFailed))
		stalled := conditions.Get(e, v1alpha1.StalledCondition)
		g.Expect(stalled).NotTo(gomega.BeNil())
		g.Expect(stalled.Status).To(gomega.Equal(metav1.ConditionTrue))
		g.Expect(stalled.Reason).To(gomega.Equal(v1alpha1.ReasonDomainBakeFailed))
		g.Expect(stalled.Message).To(gomega.And(gomega.ContainSubstring("zone-b"), gomega.ContainSubstring("errors")))
		g.Expect(conditions.IsReady(e)).To(gomega.BeFalse())
		g.Expect(kstatus(g, e)).To(gomega.Equal(status.FailedStatus))
		g.Expect(e.Status.Domains[1]).To(gomega.And(gomega.HaveField("State", v1alpha1.DomainBaking),
			gomega.HaveField("Analysis", v1alpha1.AnalysisFailed)))
	}).Should(gomega.Succeed())
	s.g.Expect(prom.queried(podB.Name)).To(gomega.BeTrue())
	s.g.Consistently(func(g gomega.Gomega) {
		podC := stable[nodes[2].Name]
		g.Expect(s.gone(g, &podC)).To(gomega.BeFalse(), "zone-c's pod was replaced after a failed bake")
		for _, p := range s.podsOf(g, second) {
			g.Expect(p.DeletionTimestamp).To(gomega.BeNil(), "a new pod was rolled back")
		}
		g.Expect(s.getEDS(g, eds.Name).Status.ActiveReplicaSet).To(gomega.Equal(second))
	}).Should(gomega.Succeed())

	// A retry judges zone-b's bake again; healthy now, zone-c follows.
	prom.set("0")
	s.annotate(eds, v1alpha1.CanaryRetryAnnotation, "bake")
	s.replaceOnNode(stable[nodes[2].Name], second)
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		expectRolledOut(g, e)
		g.Expect(e.Status.Bake.PassedThrough).To(gomega.Equal("zone-b"))
		g.Expect(conditions.Has(e, v1alpha1.AnalysisCondition)).To(gomega.BeFalse())
		for _, d := range e.Status.Domains {
			g.Expect(d.State).To(gomega.Equal(v1alpha1.DomainDone), "domain %s", d.Name)
		}
	}).Should(gomega.Succeed())
}
