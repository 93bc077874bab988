package gitops

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The PodMonitor is what gives the analysis queries their data: it must
// scrape the shipper's pods in every overlay's namespace, on a port the pods
// have, often enough that each measurement window holds the two samples
// increase() and rate() need.
func TestPodMonitorFeedsTheAnalysis(t *testing.T) {
	monitors := ofKind(render(t, "kustomize/monitoring"), "PodMonitor")
	if len(monitors) != 1 {
		t.Fatalf("kustomize/monitoring renders %d PodMonitors, want 1", len(monitors))
	}
	monitor := monitors[0]
	selector, _, _ := unstructured.NestedStringMap(monitor.Object, "spec", "selector", "matchLabels")
	namespaces, _, _ := unstructured.NestedStringSlice(monitor.Object, "spec", "namespaceSelector", "matchNames")
	endpoints, _, _ := unstructured.NestedSlice(monitor.Object, "spec", "podMetricsEndpoints")
	if len(selector) == 0 || len(endpoints) != 1 {
		t.Fatalf("PodMonitor %s: want a matchLabels selector and one endpoint, got %v and %v", monitor.GetName(), selector, endpoints)
	}
	endpoint := &unstructured.Unstructured{Object: endpoints[0].(map[string]any)}
	port := str(t, endpoint, "port")
	scrape, err := time.ParseDuration(str(t, endpoint, "interval"))
	if err != nil {
		t.Fatal(err)
	}

	for _, dir := range overlayDirs(t) {
		eds := theExtendedDaemonSet(t, dir)
		if !slices.Contains(namespaces, eds.Namespace) {
			t.Errorf("PodMonitor %s does not look in namespace %s (%s)", monitor.GetName(), eds.Namespace, dir)
		}
		for key, value := range selector {
			if eds.Spec.Template.Labels[key] != value {
				t.Errorf("PodMonitor %s selects %s=%s, which the pods of %s do not have", monitor.GetName(), key, value, dir)
			}
		}
		ports := map[string]bool{}
		for _, c := range eds.Spec.Template.Spec.Containers {
			for _, p := range c.Ports {
				ports[p.Name] = true
			}
		}
		if !ports[port] {
			t.Errorf("PodMonitor %s scrapes port %s, which the pods of %s do not name", monitor.GetName(), port, dir)
		}
		if interval := analysisInterval(eds.Spec.Strategy.Canary.Analysis); 2*scrape > interval {
			t.Errorf("PodMonitor %s scrapes every %s: a %s measurement window of %s may hold a single sample",
				monitor.GetName(), scrape, interval, dir)
		}
	}
}
