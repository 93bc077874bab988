package kubestate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// The exporter publishes the selected pods' restart counts and readiness
// exactly as kube-state-metrics names, labels and types them, and nothing
// about other pods.
func TestPublishesSelectedPodsLikeKubeStateMetrics(t *testing.T) {
	reader := fake.NewClientBuilder().WithObjects(
		pod("canary", "web-a", "uid-a", true, corev1.ConditionTrue, map[string]int32{"app": 3, "sidecar": 0}),
		pod("canary", "web-b", "uid-b", true, corev1.ConditionFalse, map[string]int32{"app": 1}),
		pod("canary", "other", "uid-c", false, corev1.ConditionTrue, map[string]int32{"app": 7}),
		pod("elsewhere", "web-c", "uid-d", true, corev1.ConditionTrue, map[string]int32{"app": 9}),
	).Build()
	e := start(t, reader, Options{Namespace: "canary", Selector: labels.SelectorFromSet(labels.Set{"app": "web"})})

	expected := `
# HELP kube_pod_container_status_restarts_total The number of container restarts per container.
# TYPE kube_pod_container_status_restarts_total counter
kube_pod_container_status_restarts_total{container="app",namespace="canary",pod="web-a",uid="uid-a"} 3
kube_pod_container_status_restarts_total{container="sidecar",namespace="canary",pod="web-a",uid="uid-a"} 0
kube_pod_container_status_restarts_total{container="app",namespace="canary",pod="web-b",uid="uid-b"} 1
# HELP kube_pod_status_ready Describes whether the pod is ready to serve requests.
# TYPE kube_pod_status_ready gauge
kube_pod_status_ready{condition="true",namespace="canary",pod="web-a",uid="uid-a"} 1
kube_pod_status_ready{condition="false",namespace="canary",pod="web-a",uid="uid-a"} 0
kube_pod_status_ready{condition="unknown",namespace="canary",pod="web-a",uid="uid-a"} 0
kube_pod_status_ready{condition="true",namespace="canary",pod="web-b",uid="uid-b"} 0
kube_pod_status_ready{condition="false",namespace="canary",pod="web-b",uid="uid-b"} 1
kube_pod_status_ready{condition="unknown",namespace="canary",pod="web-b",uid="uid-b"} 0
`
	if err := testutil.ScrapeAndCompare(metricsURL(e), strings.NewReader(expected)); err != nil {
		t.Fatal(err)
	}
}

// Every scrape reads the current statuses, so a restart shows at the next
// scrape.
func TestScrapeSeesNewRestarts(t *testing.T) {
	p := pod("default", "web", "uid", true, corev1.ConditionTrue, map[string]int32{"app": 0})
	reader := fake.NewClientBuilder().WithObjects(p).WithStatusSubresource(p).Build()
	e := start(t, reader, Options{})
	for _, restarts := range []int32{0, 4} {
		if restarts > 0 {
			p.Status.ContainerStatuses[0].RestartCount = restarts
			if err := reader.Status().Update(t.Context(), p); err != nil {
				t.Fatal(err)
			}
		}
		expected := fmt.Sprintf(`
# HELP kube_pod_container_status_restarts_total The number of container restarts per container.
# TYPE kube_pod_container_status_restarts_total counter
kube_pod_container_status_restarts_total{container="app",namespace="default",pod="web",uid="uid"} %d
`, restarts)
		if err := testutil.ScrapeAndCompare(metricsURL(e), strings.NewReader(expected), "kube_pod_container_status_restarts_total"); err != nil {
			t.Fatalf("after %d restarts: %v", restarts, err)
		}
	}
}

// A pod list that fails must fail the scrape, so Prometheus marks the target
// down instead of recording the pods as gone.
func TestFailedListFailsScrape(t *testing.T) {
	e := start(t, failingReader{}, Options{})
	resp, err := http.Get(metricsURL(e))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("scrape with a failing list: %s, want 500", resp.Status)
	}
}

func start(t *testing.T, reader client.Reader, opts Options) *Exporter {
	t.Helper()
	e, err := Start(reader, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	})
	return e
}

func metricsURL(e *Exporter) string { return "http://" + e.Addr() + "/metrics" }

func pod(namespace, name, uid string, labelled bool, ready corev1.ConditionStatus, restarts map[string]int32) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID(uid)},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}},
		},
	}
	if labelled {
		p.Labels = map[string]string{"app": "web"}
	}
	for _, name := range []string{"app", "sidecar"} {
		if n, ok := restarts[name]; ok {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: name, Image: name})
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: name, RestartCount: n})
		}
	}
	return p
}

type failingReader struct{ client.Reader }

func (failingReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("API server unavailable")
}
