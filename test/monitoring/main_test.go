// Package monitoring tests config/prometheus: the ServiceMonitor against the
// metrics Service it must scrape, the alerts with promtool, every PromQL
// expression of the alerts and the Grafana dashboard against a real
// Prometheus, and the metric names they use against what the real
// controllers export.
package monitoring

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness"
	promharness "github.com/extendeddaemonset/extendeddaemonset/test/harness/prometheus"
)

const (
	monitoringDir = "config/prometheus"
	defaultDir    = "config/default"
	dashboardFile = "dashboard.json"
	// controllerJob is the job label the ServiceMonitor gives the
	// controller's targets; alerts and panels select it.
	controllerJob = "extendeddaemonset"
)

func repoPath(rel string) string { return filepath.Join(harness.RepoRoot(), rel) }

// renderKinds builds a kustomization as `kubectl apply -k` does and returns
// its objects by kind.
func renderKinds(t *testing.T, dir string) map[string][]*unstructured.Unstructured {
	t.Helper()
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), repoPath(dir))
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	byKind := map[string][]*unstructured.Unstructured{}
	for _, res := range resMap.Resources() {
		m, err := res.Map()
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		obj := &unstructured.Unstructured{Object: m}
		byKind[obj.GetKind()] = append(byKind[obj.GetKind()], obj)
	}
	return byKind
}

// only returns the one object of kind, failing the test on none or several.
func only(t *testing.T, byKind map[string][]*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t.Helper()
	if objs := byKind[kind]; len(objs) != 1 {
		t.Fatalf("want exactly one %s, rendered %d", kind, len(objs))
	}
	return byKind[kind][0]
}

// fromUnstructured decodes part of an object into a typed value through
// JSON, which also works for kinds whose Go types this module lacks.
func fromUnstructured(t *testing.T, in any, out any) {
	t.Helper()
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
}

// startPrometheus starts a Prometheus scraping nothing, stopped at the end
// of the test; its logs go to the test log if the test fails.
func startPrometheus(t *testing.T) *promharness.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	srv, err := promharness.Start(ctx, promharness.Options{})
	if err != nil {
		t.Fatalf("starting Prometheus: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			var logs strings.Builder
			srv.DumpLogs(&logs, 10)
			t.Log(logs.String())
		}
		if err := srv.Close(); err != nil {
			t.Errorf("stopping Prometheus: %v", err)
		}
	})
	return srv
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
