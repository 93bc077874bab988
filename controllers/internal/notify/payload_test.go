package notify

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// updateGoldenEnv, set to 1, rewrites the golden files with what the tests
// got.
const updateGoldenEnv = "UPDATE_GOLDEN"

func expectGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv(updateGoldenEnv) == "1" {
		gomega.NewWithT(t).Expect(os.WriteFile(path, got, 0o600)).To(gomega.Succeed())
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s (%s=1 writes it): %v", path, updateGoldenEnv, err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from the payload built (%s=1 rewrites it):\n--- want\n%s\n--- got\n%s", path, updateGoldenEnv, want, got)
	}
}

// facts are a canary at step 2 of agent, judged by an analysis, moving
// from agent:1 to agent:2.
func facts() Facts {
	at := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	eds := &v1alpha1.ExtendedDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "agents", Name: "agent", UID: "4f1c2a", Generation: 7},
		Spec: v1alpha1.ExtendedDaemonSetSpec{Strategy: v1alpha1.ExtendedDaemonSetStrategy{Canary: &v1alpha1.CanaryStrategy{
			Analysis: &v1alpha1.CanaryAnalysis{Metrics: []v1alpha1.AnalysisMetric{
				{Name: "errors", Query: "up", ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(0.01)}},
				{Name: "restarts", Preset: "restarts"},
			}},
		}}},
		Status: v1alpha1.ExtendedDaemonSetStatus{ObservedGeneration: 7, State: v1alpha1.StateCanary, ActiveReplicaSet: "agent-a"},
	}
	return Facts{
		EDS: eds,
		Canary: &v1alpha1.CanaryStatus{
			ReplicaSet: "agent-b", Instance: "i1", Nodes: []string{"node-1", "node-2"}, Step: 2, StartedAt: &at,
			Analysis: &v1alpha1.AnalysisStatus{Phase: v1alpha1.AnalysisSuccessful, Message: "every metric passed", Metrics: []v1alpha1.MetricResult{
				{Name: "errors", Phase: v1alpha1.AnalysisSuccessful, Measurements: []v1alpha1.Measurement{{Value: "0.02", Time: at}, {Value: "0.004", Time: at}}},
				{Name: "restarts", Phase: v1alpha1.AnalysisSuccessful, Measurements: []v1alpha1.Measurement{{Value: "0", Time: at}}},
			}},
		},
		Old:        &corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "registry.example/agent:1"}}},
		New:        &corev1.PodSpec{InitContainers: []corev1.Container{{Name: "setup", Image: "registry.example/setup:1"}}, Containers: []corev1.Container{{Name: "agent", Image: "registry.example/agent:2"}}},
		ReplicaSet: "agent-b", TemplateRevision: "5d8f7c",
	}
}

func TestPayloadGolden(t *testing.T) {
	for name, tc := range map[string]struct {
		webhook v1alpha1.CanaryWebhook
		t       Transition
	}{
		"gate.json":  {v1alpha1.CanaryWebhook{Name: "change-window", Type: v1alpha1.WebhookConfirmStep}, Transition{Reason: "WaitingForGate", Gate: &GateKey{Name: "change-window", Type: v1alpha1.WebhookConfirmStep, Step: 3}}},
		"event.json": {v1alpha1.CanaryWebhook{Name: "chat", Type: v1alpha1.WebhookEvent}, Transition{Reason: "CanaryStepStarted", Message: "canary agent-b at step 2 of 3 on 2 nodes"}},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := json.MarshalIndent(NewPayload(facts(), &tc.webhook, tc.t), "", "  ")
			gomega.NewWithT(t).Expect(err).NotTo(gomega.HaveOccurred())
			expectGolden(t, name, append(got, '\n'))
		})
	}
}

// A delivery id is the same for one transition of one instance, and
// differs for another transition, step or instance.
func TestDeliveryIDIsStablePerTransitionAndInstance(t *testing.T) {
	g := gomega.NewWithT(t)
	w := &v1alpha1.CanaryWebhook{Name: "chat", Type: v1alpha1.WebhookEvent}
	id := func(change func(*Facts), reason string) string {
		f := facts()
		change(&f)
		return NewPayload(f, w, Transition{Reason: reason}).DeliveryID
	}
	same := func(*Facts) {}
	first := id(same, "CanaryStepStarted")
	g.Expect(id(same, "CanaryStepStarted")).To(gomega.Equal(first))
	g.Expect(id(func(f *Facts) { f.Canary.Nodes = append(f.Canary.Nodes, "node-3") }, "CanaryStepStarted")).To(gomega.Equal(first), "nodes are not the transition")
	g.Expect(id(same, "CanaryPaused")).NotTo(gomega.Equal(first))
	g.Expect(id(func(f *Facts) { f.Canary.Step = 3 }, "CanaryStepStarted")).NotTo(gomega.Equal(first))
	g.Expect(id(func(f *Facts) { f.Canary.Instance = "i2" }, "CanaryStepStarted")).NotTo(gomega.Equal(first), "a retried canary is a new instance")
}
