package argocd

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite kustomize/argocd/argocd-cm.yaml from health.lua")

// healthKeys are the argocd-cm keys Argo CD reads the script from, one per
// kind: <prefix>.<group>_<kind>.
var healthKeys = []string{
	"resource.customizations.health.extendeddaemonset.io_ExtendedDaemonSet",
	"resource.customizations.health.extendeddaemonset.io_ExtendedDaemonSetReplicaSet",
}

const configMapHeader = `# Argo CD health checks for ExtendedDaemonSet and ExtendedDaemonSetReplicaSet:
# health.lua under the keys Argo CD reads, to merge into the argocd-cm
# ConfigMap (see README.md). Generated from health.lua by
# ` + "`go test ./test/argocd -run TestConfigMapEmbedsTheScript -update`" + `;
# the tests fail when the two differ.
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  labels:
    app.kubernetes.io/name: argocd-cm
    app.kubernetes.io/part-of: argocd
data:
`

// renderConfigMap is argocd-cm.yaml for script.
func renderConfigMap(script string) []byte {
	var b bytes.Buffer
	b.WriteString(configMapHeader)
	for _, key := range healthKeys {
		b.WriteString("  " + key + ": |\n")
		for _, line := range strings.SplitAfter(script, "\n") {
			switch line {
			case "":
			case "\n":
				// Indenting an empty line would leave trailing spaces.
				b.WriteString(line)
			default:
				b.WriteString("    " + line)
			}
		}
	}
	return b.Bytes()
}

func configMapPath() string {
	return filepath.Join(filepath.Dir(scriptPath()), "argocd-cm.yaml")
}

// The script in argocd-cm.yaml is health.lua, byte for byte, under both
// keys: health.lua is the one that is tested.
func TestConfigMapEmbedsTheScript(t *testing.T) {
	s, err := script()
	if err != nil {
		t.Fatal(err)
	}
	// A literal block keeps exactly one final newline.
	if !strings.HasSuffix(s, "\n") || strings.HasSuffix(s, "\n\n") {
		t.Fatal("health.lua must end with exactly one newline")
	}
	want := renderConfigMap(s)
	if *update {
		if err := os.WriteFile(configMapPath(), want, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	got, err := os.ReadFile(configMapPath())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from health.lua: run go test ./test/argocd -run %s -update", configMapPath(), t.Name())
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(got, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Kind != "ConfigMap" || cm.Name != "argocd-cm" {
		t.Errorf("got %s %s, want ConfigMap argocd-cm", cm.Kind, cm.Name)
	}
	if len(cm.Data) != len(healthKeys) {
		t.Errorf("data has keys %v, want %v", keysOf(cm.Data), healthKeys)
	}
	for _, key := range healthKeys {
		if cm.Data[key] != s {
			t.Errorf("data[%s] is not health.lua", key)
		}
	}
}

// The component merges the health keys into an existing argocd-cm, in
// whatever namespace, keeping the keys already there.
func TestKustomizeComponentMergesIntoArgoCDConfigMap(t *testing.T) {
	s, err := script()
	if err != nil {
		t.Fatal(err)
	}
	for _, namespace := range []string{"", "argocd"} {
		t.Run("namespace "+namespace, func(t *testing.T) {
			dir := t.TempDir()
			// Kustomize takes components by relative path only.
			component, err := filepath.Rel(dir, filepath.Dir(scriptPath()))
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(dir, "argocd-cm.yaml"), `apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: `+namespace+`
  labels:
    app.kubernetes.io/name: argocd-cm
    app.kubernetes.io/part-of: argocd
data:
  url: https://argocd.example.com
  resource.customizations.health.example.com_Widget: |
    return {status = "Healthy"}
`)
			write(t, filepath.Join(dir, "kustomization.yaml"), `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- argocd-cm.yaml
components:
- `+component+`
`)
			resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
			if err != nil {
				t.Fatalf("kustomize build: %v", err)
			}
			if resMap.Size() != 1 {
				t.Fatalf("rendered %d objects, want the one ConfigMap", resMap.Size())
			}
			b, err := resMap.Resources()[0].AsYAML()
			if err != nil {
				t.Fatal(err)
			}
			var cm corev1.ConfigMap
			if err := yaml.Unmarshal(b, &cm); err != nil {
				t.Fatal(err)
			}
			if cm.Namespace != namespace {
				t.Errorf("namespace %q, want %q", cm.Namespace, namespace)
			}
			if cm.Data["url"] != "https://argocd.example.com" || cm.Data["resource.customizations.health.example.com_Widget"] == "" {
				t.Errorf("the ConfigMap lost its own keys: %v", keysOf(cm.Data))
			}
			for _, key := range healthKeys {
				if cm.Data[key] != s {
					t.Errorf("data[%s] is not health.lua", key)
				}
			}
		})
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func keysOf(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
