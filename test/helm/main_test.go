// Package helm tests the Helm chart in config/helm/extendeddaemonset with a
// real helm, built by test/tools/testbin.sh into the harness directory
// (KUBEBUILDER_ASSETS): helm lint, the schema refusing bad values, the
// objects rendered with the default values against config/default's, and
// install, upgrade and uninstall on a simulated cluster. A short run skips
// every test that needs helm; the check of the schema's Kubernetes types
// against k8s.io/api runs in it.
package helm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

const (
	// release and namespace are those under which the chart renders
	// exactly config/default's names.
	release   = "eds"
	namespace = "extendeddaemonset-system"
)

func repoPath(rel string) string { return filepath.Join(testenv.RepoRoot(), rel) }

func chartDir() string { return repoPath("config/helm/extendeddaemonset") }

// helm runs the helm of the harness directory and returns its standard
// output; an error carries its standard error. Outside a short run a
// missing helm fails the test.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	testenv.RequireAssets(t)
	bin, err := testenv.AssetPath("helm")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...) //nolint:gosec // the test's own helm and arguments
	// A helm of its own: no user configuration, repositories or cache.
	home := t.TempDir()
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()+stdout.String()))
	}
	return stdout.String(), nil
}

// mustHelm is helm, failing the test on an error.
func mustHelm(t *testing.T, args ...string) string {
	t.Helper()
	out, err := helm(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// template renders the chart as release eds in extendeddaemonset-system,
// CRDs included, with values set by --set/--set-string/-f args.
func template(t *testing.T, args ...string) []*unstructured.Unstructured {
	t.Helper()
	out := mustHelm(t, append([]string{"template", release, chartDir(), "-n", namespace, "--include-crds"}, args...)...)
	objs, err := parseObjects(out)
	if err != nil {
		t.Fatalf("parsing helm template's output: %v", err)
	}
	return objs
}

// parseObjects splits a YAML stream into objects, through JSON so that
// numbers read as they do from kustomize and from an API server.
func parseObjects(stream string) ([]*unstructured.Unstructured, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(stream)))
	var objs []*unstructured.Unstructured
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		if string(bytes.TrimSpace(data)) == "null" {
			continue // a document of comments only, such as a template rendering nothing
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(data); err != nil {
			return nil, fmt.Errorf("%s: %w", doc, err)
		}
		objs = append(objs, obj)
	}
}

// key names an object as the comparisons and the cluster checks do.
func key(obj *unstructured.Unstructured) string {
	return obj.GetKind() + " " + obj.GetNamespace() + "/" + obj.GetName()
}

// find returns the rendered object of kind and name, or fails the test.
func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, obj := range objs {
		if obj.GetKind() == kind && obj.GetName() == name {
			return obj
		}
	}
	t.Fatalf("no %s %s rendered", kind, name)
	return nil
}
