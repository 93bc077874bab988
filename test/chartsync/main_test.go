package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const schemaJSON = `{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "image": {
      "description": "The image.",
      "type": "object",
      "properties": {
        "tag": {"description": "Tag | or digest.", "type": "string"},
        "pullPolicy": {"description": "Pull policy.", "type": "string", "enum": ["", "Always"]}
      }
    },
    "namespaces": {"description": "Watched.", "type": "array", "items": {"type": "string"}},
    "qps": {"description": "QPS.", "type": ["number", "null"]},
    "tolerations": {"description": "Tolerations.", "type": "array", "items": {"$ref": "#/$defs/Toleration"}},
    "securityContext": {"description": "Security.", "type": "object", "$ref": "#/$defs/SecurityContext"}
  },
  "$defs": {
    "Toleration": {"type": "object", "properties": {"key": {}}},
    "SecurityContext": {"type": "object", "properties": {"runAsNonRoot": {}}}
  }
}`

const valuesYAML = `image:
  tag: ""
  pullPolicy: ""
namespaces: []
qps: null
tolerations: []
securityContext:
  runAsNonRoot: true
`

const readme = "# Title\n\nBefore.\n\n<!-- helm-values:begin -->\nstale\n<!-- helm-values:end -->\n\nAfter.\n"

// chart writes a chart directory with the given schema and values.
func chart(t *testing.T, schema, values string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{"values.schema.json": schema, "values.yaml": values} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func writeReadme(t *testing.T, content string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "README.md")
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestValuesTable(t *testing.T) {
	file := writeReadme(t, readme)
	if err := writeValuesTable(chart(t, schemaJSON, valuesYAML), file); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Title\n\nBefore.\n\n" + beginLine + "\n" +
		"| key | type | default | description |\n|---|---|---|---|\n" +
		"| `image.pullPolicy` | string | `\"\"` | Pull policy. One of: `\"\"`, `\"Always\"`. |\n" +
		"| `image.tag` | string | `\"\"` | Tag \\| or digest. |\n" +
		"| `namespaces` | list of string | `[]` | Watched. |\n" +
		"| `qps` | number or null | `null` | QPS. |\n" +
		"| `securityContext` | SecurityContext | `{\"runAsNonRoot\":true}` | Security. |\n" +
		"| `tolerations` | list of Toleration | `[]` | Tolerations. |\n" +
		"<!-- helm-values:end -->\n\nAfter.\n"
	if string(got) != want {
		t.Errorf("README\n got %q\nwant %q", got, want)
	}
	// A second run changes nothing.
	if err := writeValuesTable(chart(t, schemaJSON, valuesYAML), file); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(file); string(again) != want {
		t.Errorf("a second run changed the README:\n%s", again)
	}
}

func TestValuesTableRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, schema, values, readme, want string
	}{
		{"a value without a default", schemaJSON, strings.Replace(valuesYAML, "qps: null\n", "", 1), readme,
			"qps: no default in values.yaml"},
		{"a value the schema lacks", schemaJSON, valuesYAML + "extra: 1\n", readme,
			"extra: in values.yaml but not in the schema"},
		{"a value without a description", strings.Replace(schemaJSON, `"description": "QPS.", `, "", 1), valuesYAML, readme,
			"qps: no description in the schema"},
		{"a scalar where the schema has properties", schemaJSON, strings.Replace(valuesYAML, "image:\n  tag: \"\"\n  pullPolicy: \"\"\n", "image: x\n", 1), readme,
			"image: the schema has properties"},
		{"no begin marker", schemaJSON, valuesYAML, "# Title\n<!-- helm-values:end -->\n", "no \"<!-- helm-values:begin"},
		{"no end marker", schemaJSON, valuesYAML, "# Title\n<!-- helm-values:begin -->\n", "no \"<!-- helm-values:end -->\" line after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := writeValuesTable(chart(t, tc.schema, tc.values), writeReadme(t, tc.readme))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestCopies(t *testing.T) {
	config, out := t.TempDir(), t.TempDir()
	files := map[string]string{
		"crd/bases/things.yaml":     "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things.example.com\n",
		"rbac/role.yaml":            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: manager-role\nrules:\n- apiGroups: [\"\"]\n  resources: [pods]\n  verbs: [list]\n",
		"prometheus/rules.yaml":     "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n  name: alerts\nspec:\n  groups:\n  - name: g\n    rules:\n    - alert: A\n      expr: up == 0\n      annotations:\n        summary: '{{ $labels.job }} is down'\n",
		"prometheus/dashboard.json": "{\"title\": \"d\"}\n",
	}
	for name, content := range files {
		path := filepath.Join(config, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A CRD config/ no longer has is removed from the chart.
	if err := os.MkdirAll(filepath.Join(out, "crds"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "crds", "gone.yaml"), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := run(config, out, writeReadme(t, readme)); err == nil || !strings.Contains(err.Error(), "values.schema.json") {
		t.Fatalf("want an error about the missing schema after the copies, got %v", err)
	}
	for name, want := range map[string][]string{
		"crds/things.yaml":            {"# Generated by test/chartsync from ", "app.kubernetes.io/part-of: 'extendeddaemonset'", "name: things.example.com"},
		"files/manager-rules.yaml":    {"# Generated by test/chartsync from ", "- apiGroups: [\"\"]\n  resources: [pods]"},
		"files/prometheus-rules.yaml": {"# Generated by test/chartsync from ", "groups:\n- name: g", "summary: '{{ $labels.job }} is down'"},
		"files/dashboard.json":        {"{\"title\": \"d\"}\n"},
	} {
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, w := range want {
			if !strings.Contains(string(data), w) {
				t.Errorf("%s lacks %q:\n%s", name, w, data)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(out, "crds", "gone.yaml")); !os.IsNotExist(err) {
		t.Errorf("a CRD config/ no longer has stays in the chart: %v", err)
	}
}

func TestCopyRefusesWrongKind(t *testing.T) {
	file := filepath.Join(t.TempDir(), "role.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := syncRules(file, filepath.Join(t.TempDir(), "rules.yaml"))
	if err == nil || !strings.Contains(err.Error(), `a "ConfigMap", not a ClusterRole`) {
		t.Errorf("error %v, want one naming the kinds", err)
	}
}
