package helm

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/diff"

	"github.com/extendeddaemonset/extendeddaemonset/test/internal/kubeapply"
)

// The only differences between the chart with its default values and
// config/default, each with its reason. Anything else the two render
// differently fails the comparison: there is one install, two ways to run it.

// helmLabels are the labels every object the chart renders from a template
// carries and kustomize has no value for: the chart and its version, the
// release and the tool managing it (Helm's conventions, read by tools that
// list a release's objects). The CRDs, which Helm copies from crds/ without
// rendering, have none.
var helmLabels = []string{
	"helm.sh/chart",
	"app.kubernetes.io/managed-by",
	"app.kubernetes.io/instance",
	"app.kubernetes.io/version",
}

// onlyInKustomize are the kinds config/default renders and the chart does
// not, by the reason why.
var onlyInKustomize = map[string]string{
	// A chart that creates its release's namespace fails when the namespace
	// exists, and helm uninstall would delete everything in it; Helm
	// creates it with --create-namespace.
	"Namespace": "helm install --create-namespace creates the release's namespace",
}

func TestDefaultValuesRenderConfigDefault(t *testing.T) {
	compare(t, template(t), kustomize(t, "config/default"))
}

func TestMetricsRenderConfigPrometheus(t *testing.T) {
	chart := template(t, "--set", "metrics.serviceMonitor.enabled=true",
		"--set", "metrics.prometheusRule.enabled=true", "--set", "metrics.dashboard.enabled=true")
	compare(t, chart, append(kustomize(t, "config/default"), kustomize(t, "config/prometheus")...))
}

func kustomize(t *testing.T, rel string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := kubeapply.Render(repoPath(rel))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// compare fails t for every object only one side renders and every object
// whose content differs, once the allowed differences are taken out.
func compare(t *testing.T, chart, kustomized []*unstructured.Unstructured) {
	t.Helper()
	want := map[string]*unstructured.Unstructured{}
	for _, obj := range kustomized {
		if _, allowed := onlyInKustomize[obj.GetKind()]; allowed {
			continue
		}
		want[key(obj)] = obj
	}
	got := map[string]*unstructured.Unstructured{}
	for _, obj := range chart {
		if _, dup := got[key(obj)]; dup {
			t.Errorf("the chart renders %s twice", key(obj))
		}
		got[key(obj)] = withoutHelmLabels(t, obj)
	}
	for _, k := range sortedKeys(want) {
		if _, found := got[k]; !found {
			t.Errorf("kustomize renders %s, the chart does not", k)
		}
	}
	for _, k := range sortedKeys(got) {
		w, found := want[k]
		if !found {
			t.Errorf("the chart renders %s, kustomize does not", k)
			continue
		}
		if d := diff.Diff(w.Object, got[k].Object); d != "" {
			t.Errorf("%s differs (- kustomize, + chart):\n%s", k, d)
		}
	}
}

// withoutHelmLabels returns a copy of obj without Helm's labels, failing t
// when an object rendered from a template lacks one of them.
func withoutHelmLabels(t *testing.T, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	obj = obj.DeepCopy()
	labels := obj.GetLabels()
	for _, label := range helmLabels {
		if _, found := labels[label]; !found && obj.GetKind() != "CustomResourceDefinition" {
			t.Errorf("%s lacks Helm's label %s", key(obj), label)
		}
		delete(labels, label)
	}
	obj.SetLabels(labels)
	return obj
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
