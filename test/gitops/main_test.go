// Package gitops tests the user-facing GitOps examples under kustomize/: the
// overlays are applied to a real API server, and the Flux and Argo CD objects,
// whose CRDs that server does not have, are checked against what they point
// at in the repository.
package gitops

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness"
)

var k8s client.Client

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	return harness.RunWithEnvtest(func(_ *envtest.Environment, c client.Client) int {
		k8s = c
		return m.Run()
	})
}

func repoPath(rel string) string { return filepath.Join(harness.RepoRoot(), rel) }

// build renders dir as `kubectl kustomize` does, with extra patches appended
// the way Flux (spec.patches) and Argo CD (spec.source.kustomize.patches) add
// theirs: in a kustomization of their own on top of dir.
func build(dir string, patches []any) ([]*unstructured.Unstructured, error) {
	if len(patches) > 0 {
		top, err := os.MkdirTemp("", "gitops-build-")
		if err != nil {
			return nil, err
		}
		defer func() { _ = os.RemoveAll(top) }()
		// Kustomize refuses an absolute root.
		rel, err := filepath.Rel(top, dir)
		if err != nil {
			return nil, err
		}
		kustomization, err := yaml.Marshal(map[string]any{
			"apiVersion": "kustomize.config.k8s.io/v1beta1",
			"kind":       "Kustomization",
			"resources":  []string{rel},
			"patches":    patches,
		})
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(top, "kustomization.yaml"), kustomization, 0o600); err != nil {
			return nil, err
		}
		dir = top
	}
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, err
	}
	objs := make([]*unstructured.Unstructured, 0, resMap.Size())
	for _, res := range resMap.Resources() {
		m, err := res.Map()
		if err != nil {
			return nil, err
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs, nil
}

// render builds a directory of the repository or fails the test.
func render(t *testing.T, rel string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := build(repoPath(rel), nil)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", rel, err)
	}
	return objs
}

// ofKind returns the objects of one kind.
func ofKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, obj := range objs {
		if obj.GetKind() == kind {
			out = append(out, obj)
		}
	}
	return out
}

// extendedDaemonSets converts the rendered ExtendedDaemonSets to the API type,
// so that assertions read fields the way the controller does.
func extendedDaemonSets(t *testing.T, objs []*unstructured.Unstructured) []*v1alpha1.ExtendedDaemonSet {
	t.Helper()
	var out []*v1alpha1.ExtendedDaemonSet
	for _, obj := range ofKind(objs, "ExtendedDaemonSet") {
		eds := &v1alpha1.ExtendedDaemonSet{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, eds, true); err != nil {
			t.Fatalf("ExtendedDaemonSet %s does not match the API type: %v", obj.GetName(), err)
		}
		out = append(out, eds)
	}
	return out
}

// theExtendedDaemonSet renders rel and returns its only ExtendedDaemonSet.
func theExtendedDaemonSet(t *testing.T, rel string) *v1alpha1.ExtendedDaemonSet {
	t.Helper()
	all := extendedDaemonSets(t, render(t, rel))
	if len(all) != 1 {
		t.Fatalf("%s renders %d ExtendedDaemonSets, want 1", rel, len(all))
	}
	return all[0]
}

// str reads a string field, failing the test when it is missing.
func str(t *testing.T, obj *unstructured.Unstructured, fields ...string) string {
	t.Helper()
	v, found, err := unstructured.NestedString(obj.Object, fields...)
	if err != nil || !found {
		t.Fatalf("%s %s has no string at %v (err %v)", obj.GetKind(), obj.GetName(), fields, err)
	}
	return v
}
