package argocd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// A Lua error in a health script leaves Argo CD without the health of the
// whole Application, so objects the controller would never write must
// still get a status, and a sensible one.
func TestHealthOfMalformedObjects(t *testing.T) {
	for _, tc := range []struct {
		name, object    string
		status, message string
	}{
		{"empty object", `{}`, Progressing, "waiting for the controller to report a status"},
		{"metadata a string", `{"metadata": "agent", "status": {"conditions": []}}`,
			Progressing, "waiting for the controller to report progress"},
		{"generation not a number", `{"metadata": {"generation": "two"}, "status": "Ready"}`,
			Progressing, "waiting for the controller to report a status"},
		{"status a string", `{"metadata": {"generation": 2}, "status": "Ready"}`,
			Progressing, "waiting for the controller to observe generation 2"},
		{"status a list", `{"metadata": {"generation": 2}, "status": []}`,
			Progressing, "waiting for the controller to observe generation 2"},
		{"observedGeneration a map", `{"metadata": {"generation": 2}, "status": {"observedGeneration": {}}}`,
			Progressing, "waiting for the controller to observe generation 2"},
		{"conditions a string", `{"status": {"conditions": "Ready"}}`,
			Progressing, "waiting for the controller to report progress"},
		{"conditions a map", `{"status": {"conditions": {"type": "Ready", "status": "True"}}}`,
			Progressing, "waiting for the controller to report progress"},
		{"conditions of every type", `{"status": {"conditions": ["Ready", 3, null, true, [], {"type": 7, "status": "True"}]}}`,
			Progressing, "waiting for the controller to report progress"},
		{"Stalled without words", `{"status": {"conditions": [{"type": "Stalled", "status": "True", "reason": 5, "message": {"text": "x"}}]}}`,
			Degraded, "the rollout is stalled"},
		{"Stalled with a reason only", `{"status": {"conditions": [{"type": "Stalled", "status": "True", "reason": "InvalidSpec", "message": ""}]}}`,
			Degraded, "InvalidSpec"},
		{"paused canary without message", `{"status": {"conditions": [{"type": "Reconciling", "status": "True", "reason": "CanaryPaused"}]}}`,
			Suspended, "CanaryPaused"},
		{"Reconciling without words", `{"status": {"conditions": [{"type": "Reconciling", "status": "True"}]}}`,
			Progressing, "rollout in progress"},
		{"Ready with counters of another type", `{"status": {"conditions": [{"type": "Ready", "status": "True", "message": "3 pods available"}], "available": "all", "desired": null}}`,
			Healthy, "3 pods available"},
		{"Ready without words", `{"status": {"conditions": [{"type": "Ready", "status": "True"}]}}`,
			Healthy, "rolled out"},
		{"ResourceOverrides message not a string", `{"status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "ResourceOverrides", "status": "False", "message": 12}], "available": 1, "desired": 1}}`,
			Healthy, "1/1 pods available"},
		{"Ready False alone", `{"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "Progressing", "message": "waiting for replica set agent-7jtzc"}]}}`,
			Progressing, "waiting for replica set agent-7jtzc"},
		{"Ready Unknown", `{"status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}}`,
			Progressing, "waiting for the controller to report progress"},
		{"first of duplicate conditions wins", `{"status": {"conditions": [{"type": "Ready", "status": "False", "message": "first"}, {"type": "Ready", "status": "True"}]}}`,
			Progressing, "first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var object map[string]any
			if err := json.Unmarshal([]byte(tc.object), &object); err != nil {
				t.Fatal(err)
			}
			expectHealth(t, &unstructured.Unstructured{Object: object}, tc.status, tc.message)
		})
	}
}

// FuzzHealth feeds the script arbitrary JSON objects, starting from the
// fixtures: whatever the shape, it returns a status Argo CD knows and never
// fails. `go test` runs the seeds; `go test -fuzz FuzzHealth` explores.
func FuzzHealth(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		j, err := yaml.YAMLToJSON(b)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(j))
	}
	f.Add(`{"status": {"conditions": [{"type": "Stalled", "status": "True"}, {"type": "Reconciling", "status": "True"}]}}`)
	f.Fuzz(func(t *testing.T, object string) {
		var m map[string]any
		if json.Unmarshal([]byte(object), &m) != nil {
			return
		}
		gotStatus, _, err := Health(&unstructured.Unstructured{Object: m})
		if err != nil {
			t.Fatalf("Health(%s): %v", object, err)
		}
		switch gotStatus {
		case Healthy, Progressing, Suspended, Degraded:
		default:
			t.Fatalf("Health(%s) = %s", object, gotStatus)
		}
	})
}
