package controllers

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// gateReceiver answers 503 until opened, then 200, and remembers the
// domain of each payload it was asked. The suite's controllers run without
// --allowed-webhook-hosts, which keeps loopback out: it listens on an
// address of the machine's network instead.
type gateReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	open    bool
	domains []string
}

func newGateReceiver(t *testing.T) *gateReceiver {
	t.Helper()
	ip := networkAddress(t)
	l, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
	if err != nil {
		t.Fatalf("listening on %s: %v", ip, err)
	}
	r := &gateReceiver{}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body struct {
			Domain string `json:"domain"`
		}
		_ = json.NewDecoder(req.Body).Decode(&body)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.domains = append(r.domains, body.Domain)
		if !r.open {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	r.Listener = l
	r.Start()
	t.Cleanup(r.Close)
	return r
}

func (r *gateReceiver) opened() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.open = true
}

func (r *gateReceiver) asked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.domains...)
}

// networkAddress is an IPv4 address of the machine that is neither
// loopback nor link-local.
func networkAddress(t *testing.T) net.IP {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatalf("listing the machine's addresses: %v", err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP
		}
	}
	t.Skip("the machine has no IPv4 address besides loopback and link-local, which webhooks may reach only with --allowed-webhook-hosts")
	return nil
}

// In a Sequential topology rollout, the canary's confirm-step webhook
// stands before each domain after the first: zone-b waits, Pending, its
// old pod untouched, with the gate, the domain and since when in the
// conditions, until the receiver answers 2xx; then it starts, and zone-c's
// gate is asked in turn.
func TestConfirmStepGatesEachDomain(t *testing.T) {
	s := newScenario(t)
	receiver := newGateReceiver(t)
	nodes := []*corev1.Node{
		s.createNode("a", map[string]string{zoneLabel: "zone-a"}),
		s.createNode("b", map[string]string{zoneLabel: "zone-b"}),
		s.createNode("c", map[string]string{zoneLabel: "zone-c"}),
	}
	eds := s.newEDS("agent", imageV1)
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(3))
	eds.Spec.Strategy.RollingUpdate.Topology = &v1alpha1.RollingUpdateTopology{Key: zoneLabel}
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(1)), ValidationMode: v1alpha1.CanaryValidationManual,
		NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{zoneLabel: "zone-a"}},
		Webhooks: []v1alpha1.CanaryWebhook{{Name: "window", Type: v1alpha1.WebhookConfirmStep,
			WebRequest: v1alpha1.WebRequest{URL: receiver.URL}, Interval: &metav1.Duration{Duration: 5 * time.Second}}},
	}
	_, stable := s.createRolledOut(eds, nodes...)

	// The canary, on zone-a's node, validated by a person: zone-a is done.
	s.setImage(eds, imageV2)
	var second string
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.Canary).NotTo(gomega.BeNil())
		second = e.Status.Canary.ReplicaSet
	}).Should(gomega.Succeed())
	s.replaceOnNode(stable[nodes[0].Name], second)
	s.annotate(eds, v1alpha1.CanaryValidatedAnnotation, second)

	// zone-b waits at the gate.
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(second))
		g.Expect(e.Status.DomainGate).NotTo(gomega.BeNil())
		g.Expect(e.Status.DomainGate.Domain).To(gomega.Equal("zone-b"))
		g.Expect(e.Status.DomainGate.Gates).To(gomega.ConsistOf(gomega.And(gomega.HaveField("Name", "window"),
			gomega.HaveField("PassedAt", gomega.BeNil()), gomega.HaveField("LastAnswer", "answered 503"))))
		g.Expect(conditions.IsReady(e)).To(gomega.BeFalse())
		reconciling := conditions.Get(e, v1alpha1.ReconcilingCondition)
		g.Expect(reconciling).NotTo(gomega.BeNil())
		g.Expect(reconciling.Reason).To(gomega.Equal(v1alpha1.ReasonWaitingForGate))
		g.Expect(reconciling.Message).To(gomega.MatchRegexp(`waiting for gate window \(confirm-step\) before domain zone-b since \S+Z; last answer: answered 503`))
		g.Expect(e.Status.State).To(gomega.Equal(v1alpha1.StateRollingUpdate))
		g.Expect(e.Status.Domains).To(gomega.HaveLen(3))
		g.Expect(e.Status.Domains[1]).To(gomega.HaveField("State", v1alpha1.DomainPending))
	}).Should(gomega.Succeed())
	s.g.Expect(receiver.asked()).To(gomega.HaveEach("zone-b"))
	s.g.Consistently(func(g gomega.Gomega) {
		podB := stable[nodes[1].Name]
		g.Expect(s.gone(g, &podB)).To(gomega.BeFalse(), "zone-b's pod was replaced before its gate passed")
	}).Should(gomega.Succeed())

	// The gate passes: zone-b starts; zone-c's gate, asked in turn, passes
	// at once.
	receiver.opened()
	s.replaceOnNode(stable[nodes[1].Name], second)
	s.replaceOnNode(stable[nodes[2].Name], second)
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		expectRolledOut(g, e)
		g.Expect(e.Status.DomainGate).NotTo(gomega.BeNil())
		g.Expect(e.Status.DomainGate.PassedThrough).To(gomega.Equal("zone-c"))
	}).Should(gomega.Succeed())
	s.g.Expect(receiver.asked()).To(gomega.ContainElements("zone-b", "zone-c"))
	s.g.Expect(receiver.asked()).NotTo(gomega.ContainElement("zone-a"), "the first domain has no gate")
}
