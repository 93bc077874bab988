package main

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"text/template"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness"
)

// demoName is the demo ExtendedDaemonSet's name.
const demoName = "demo"

// gitFieldOwner is the field manager of the demo's applies: the demo plays
// git and its sync.
const gitFieldOwner = "demo-git"

//go:embed demo.yaml
var demoManifest string

var demoTemplate = template.Must(template.New("demo.yaml").Option("missingkey=error").Parse(demoManifest))

// version is one release of the demo agent.
type version struct {
	Number int
	// ErrorRate is the share of requests it fails.
	ErrorRate float64
}

// manifest is the demo ExtendedDaemonSet running v, judged by the
// Prometheus at prometheusURL.
func manifest(v version, prometheusURL string) (*unstructured.Unstructured, error) {
	var doc bytes.Buffer
	err := demoTemplate.Execute(&doc, map[string]string{
		"Prometheus": prometheusURL,
		"Version":    strconv.Itoa(v.Number),
		"ErrorRate":  strconv.FormatFloat(v.ErrorRate, 'f', -1, 64),
	})
	if err != nil {
		return nil, fmt.Errorf("rendering demo.yaml: %w", err)
	}
	// Strict, so that the manifest cannot drift from the API unnoticed.
	var eds v1alpha1.ExtendedDaemonSet
	if err := yaml.UnmarshalStrict(doc.Bytes(), &eds); err != nil {
		return nil, fmt.Errorf("decoding demo.yaml: %w", err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(doc.Bytes(), &obj.Object); err != nil {
		return nil, fmt.Errorf("decoding demo.yaml: %w", err)
	}
	return obj, nil
}

// apply writes the demo at v as a GitOps sync would, with server-side
// apply.
func apply(ctx context.Context, c client.Client, v version, prometheusURL string) error {
	obj, err := manifest(v, prometheusURL)
	if err != nil {
		return err
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(gitFieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying the demo at v%d: %w", v.Number, err)
	}
	return nil
}

// scheme knows the core kinds, ours and CRDs.
func scheme() *runtime.Scheme {
	s := harness.Scheme()
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	return s
}
