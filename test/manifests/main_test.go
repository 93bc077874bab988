// Package manifests tests the shipped CRDs, samples and kustomize bases
// against a real API server.
package manifests

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

var (
	k8s        client.Client
	restConfig *rest.Config
)

func TestMain(m *testing.M) {
	// A short run starts no API server; the tests that need one skip
	// (testenv.RequireAssets) and the rendering and schema tests run.
	if testenv.Short() {
		os.Exit(m.Run())
	}
	os.Exit(testenv.Run(func(env *envtest.Environment, c client.Client) int {
		restConfig = env.Config
		k8s = c
		return m.Run()
	}))
}

func repoPath(rel string) string { return filepath.Join(testenv.RepoRoot(), rel) }

// fromYAML parses one object.
func fromYAML(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatalf("parsing %q: %v", doc, err)
	}
	return u
}

// create creates obj (in the default namespace unless it names one) and
// removes it at the end of the test.
func create(ctx context.Context, t *testing.T, obj *unstructured.Unstructured) error {
	t.Helper()
	if obj.GetNamespace() == "" {
		obj.SetNamespace("default")
	}
	err := k8s.Create(ctx, obj)
	if err == nil {
		t.Cleanup(func() { _ = k8s.Delete(context.Background(), obj) })
	}
	return err
}

// tableCodecs decodes the API server's Table answers.
func tableCodecs() runtime.NegotiatedSerializer {
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	utilruntime.Must(metav1.AddMetaToScheme(scheme))
	return serializer.NewCodecFactory(scheme).WithoutConversion()
}
