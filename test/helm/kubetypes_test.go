package helm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// kubernetesTypes are the Kubernetes types the values pass into the pod.
// values.schema.json defines each in $defs under its Go name, listing its
// fields with additionalProperties false, so that a misspelt field fails
// helm with the key's path rather than vanishing from the pod; the fields'
// own values are left to the API server. This test keeps those lists equal
// to the types' fields at the Kubernetes version of this module.
var kubernetesTypes = []any{
	corev1.Affinity{},
	corev1.Toleration{},
	corev1.TopologySpreadConstraint{},
	corev1.PodSecurityContext{},
	corev1.SecurityContext{},
}

func TestSchemaListsTheFieldsOfKubernetesTypes(t *testing.T) {
	// Runs in a short run too: it needs no helm.
	data, err := os.ReadFile(filepath.Join(chartDir(), "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Defs map[string]struct {
			AdditionalProperties *bool          `json:"additionalProperties"`
			Properties           map[string]any `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	for _, value := range kubernetesTypes {
		typ := reflect.TypeOf(value)
		def, found := schema.Defs[typ.Name()]
		if !found {
			t.Errorf("values.schema.json has no $defs.%s", typ.Name())
			continue
		}
		if def.AdditionalProperties == nil || *def.AdditionalProperties {
			t.Errorf("values.schema.json: $defs.%s allows unknown fields", typ.Name())
		}
		listed := make([]string, 0, len(def.Properties))
		for name := range def.Properties {
			listed = append(listed, name)
		}
		slices.Sort(listed)
		if want := jsonFields(typ); !slices.Equal(listed, want) {
			t.Errorf("values.schema.json: $defs.%s lists the fields %q; %T has %q", typ.Name(), listed, value, want)
		}
	}
}

// jsonFields are the JSON names of a struct's fields, sorted.
func jsonFields(typ reflect.Type) []string {
	var names []string
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}
