package manifests

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

func loadCRD(t *testing.T, plural string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(repoPath(filepath.Join("config/crd/bases", "extendeddaemonset.io_"+plural+".yaml")))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

var crds = []struct {
	plural, shortName string
	columns           []string
}{
	{"extendeddaemonsets", "eds", []string{"Name", "Desired", "Current", "Ready", "Up-To-Date", "Available", "Status", "Active RS", "Canary RS", "Age"}},
	{"extendeddaemonsetreplicasets", "ers", []string{"Name", "Status", "Desired", "Current", "Ready", "Available", "Node Selector", "Age"}},
	{"extendeddaemonsetsettings", "edss", []string{"Name", "Status", "Node Selector", "Error", "Age"}},
}

// podTemplateFields are the schemas of the embedded pod template whose inner
// fields are Kubernetes' own ObjectMeta and PodSpec: `make manifests`
// removes their descriptions (test/crdtrim) so that the CRDs fit in the
// annotation of client-side `kubectl apply`. These schemas keep theirs, as
// does spec.template.
var podTemplateFields = []string{"spec.template.metadata", "spec.template.spec"}

// Descriptions become `kubectl explain` text; a field without one is a field
// users have to guess at.
func TestEveryFieldIsDocumented(t *testing.T) {
	for _, c := range crds {
		crd := loadCRD(t, c.plural)
		spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties
		for _, root := range []string{"spec", "status"} {
			walkSchema(root, spec[root], func(path string, s apiextensionsv1.JSONSchemaProps) {
				if s.Description == "" {
					t.Errorf("%s: %s has no description", c.plural, path)
				}
			})
		}
	}
}

// The pod template's own fields lose their descriptions; ours keep them.
func TestPodTemplateDescriptionsAreTrimmed(t *testing.T) {
	for _, plural := range []string{"extendeddaemonsets", "extendeddaemonsetreplicasets"} {
		crd := loadCRD(t, plural)
		spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		template := spec.Properties["template"]
		if template.Description == "" {
			t.Errorf("%s: spec.template lost its description", plural)
		}
		for _, field := range podTemplateFields {
			s, ok := template.Properties[strings.TrimPrefix(field, "spec.template.")]
			if !ok {
				t.Fatalf("%s has no %s", plural, field)
			}
			if s.Description == "" {
				t.Errorf("%s: %s lost its description", plural, field)
			}
			described := 0
			visitAll(s, func(inner apiextensionsv1.JSONSchemaProps) {
				if inner.Description != "" {
					described++
				}
			})
			if described != 1 {
				t.Errorf("%s: %d schemas in %s have a description, want only %s itself: run make manifests",
					plural, described, field, field)
			}
		}
	}
	crd := loadCRD(t, "extendeddaemonsets")
	canary := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["strategy"].Properties["canary"]
	if d := canary.Properties["duration"].Description; !strings.HasPrefix(d, "Duration is how long") {
		t.Errorf("spec.strategy.canary.duration lost its description: %q", d)
	}
}

// visitAll visits s and every schema below it.
func visitAll(s apiextensionsv1.JSONSchemaProps, visit func(apiextensionsv1.JSONSchemaProps)) {
	visit(s)
	for _, child := range s.Properties {
		visitAll(child, visit)
	}
	if s.Items != nil && s.Items.Schema != nil {
		visitAll(*s.Items.Schema, visit)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		visitAll(*s.AdditionalProperties.Schema, visit)
	}
	for _, sub := range [][]apiextensionsv1.JSONSchemaProps{s.AllOf, s.AnyOf, s.OneOf} {
		for _, child := range sub {
			visitAll(child, visit)
		}
	}
}

func walkSchema(path string, s apiextensionsv1.JSONSchemaProps, visit func(string, apiextensionsv1.JSONSchemaProps)) {
	visit(path, s)
	// The pod template's inner fields are Kubernetes' own, described in the
	// Kubernetes API reference, not in the CRD (podTemplateFields).
	if slices.Contains(podTemplateFields, path) {
		return
	}
	// Embedded object metadata is Kubernetes' own ObjectMeta, which
	// controller-gen reduces to bare fields; `kubectl explain` users know it.
	if strings.HasSuffix(path, ".metadata") {
		return
	}
	for name, child := range s.Properties {
		walkSchema(path+"."+name, child, visit)
	}
	if s.Items != nil && s.Items.Schema != nil {
		for name, child := range s.Items.Schema.Properties {
			walkSchema(path+"[]."+name, child, visit)
		}
	}
}

func TestNamesAndCategories(t *testing.T) {
	for _, c := range crds {
		crd := loadCRD(t, c.plural)
		if !slices.Equal(crd.Spec.Names.ShortNames, []string{c.shortName}) {
			t.Errorf("%s: short names %v, want [%s]", c.plural, crd.Spec.Names.ShortNames, c.shortName)
		}
		if slices.Contains(crd.Spec.Names.Categories, "all") {
			t.Errorf("%s is in category all: `kubectl get all` would list it", c.plural)
		}
	}
}

// The API server's table view is what `kubectl get` prints.
func TestPrinterColumns(t *testing.T) {
	testenv.RequireAssets(t)
	cfg := rest.CopyConfig(restConfig)
	cfg.GroupVersion = &v1alpha1.GroupVersion
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = tableCodecs()
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range crds {
		table := &metav1.Table{}
		err := rc.Get().Namespace("default").Resource(c.plural).
			SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").
			Do(context.Background()).Into(table)
		if err != nil {
			t.Fatalf("%s: %v", c.plural, err)
		}
		var got []string
		for _, col := range table.ColumnDefinitions {
			if col.Priority == 0 {
				got = append(got, col.Name)
			}
		}
		if !slices.Equal(got, c.columns) {
			t.Errorf("kubectl get %s columns: %v, want %v", c.shortName, got, c.columns)
		}
	}
}
