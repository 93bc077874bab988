package manifests

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/kubeapply"
)

// withLastApplied returns a copy of obj annotated as client-side
// `kubectl apply` annotates it, with kubectl's own code: the object's JSON,
// without that annotation, in kubectl.kubernetes.io/last-applied-configuration.
// It also returns the size of all its annotations as the API server counts
// them against apivalidation.TotalAnnotationSizeLimitB.
func withLastApplied(t *testing.T, obj *unstructured.Unstructured) (*unstructured.Unstructured, int) {
	t.Helper()
	annotated, err := kubeapply.Annotated(obj)
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	for k, v := range annotated.GetAnnotations() {
		size += len(k) + len(v)
	}
	return annotated, size
}

// Client-side `kubectl apply -k config/default`, and Argo CD's default sync,
// keep each object's whole JSON in an annotation, and the API server refuses
// an object whose annotations total more than 256 KiB. Most of a CRD with an
// embedded pod template is the pod's field descriptions, which `make
// manifests` therefore removes (test/crdtrim).
func TestCRDsApplyClientSide(t *testing.T) {
	testenv.RequireAssets(t)
	ctx := context.Background()
	applied := 0
	for _, obj := range render(t, repoPath("config/default")) {
		if obj.GetKind() != "CustomResourceDefinition" {
			continue
		}
		applied++
		t.Run(obj.GetName(), func(t *testing.T) {
			annotated, size := withLastApplied(t, obj)
			limit := apivalidation.TotalAnnotationSizeLimitB
			t.Logf("annotations of %s: %d bytes (last-applied-configuration %d), limit %d, margin %d bytes (%.0f%%)",
				obj.GetName(), size, len(annotated.GetAnnotations()[corev1.LastAppliedConfigAnnotation]),
				limit, limit-size, 100*float64(limit-size)/float64(limit))
			if size > limit {
				t.Errorf("client-side kubectl apply of CRD %s would be refused: its annotations, with %s, total %d bytes, over the API server's limit of %d by %d; "+
					"a description of an embedded Kubernetes type is probably back (see test/crdtrim)",
					obj.GetName(), corev1.LastAppliedConfigAnnotation, size, limit, size-limit)
			}

			// The test environment installed the CRD: kubectl would patch
			// it, and the API server validates the patched object as it does
			// an update.
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(obj.GroupVersionKind())
			err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), live)
			switch {
			case apierrors.IsNotFound(err):
				err = k8s.Create(ctx, annotated)
			case err == nil:
				annotated.SetResourceVersion(live.GetResourceVersion())
				err = k8s.Update(ctx, annotated)
			}
			if err != nil {
				t.Fatalf("the API server refused CRD %s with the %s annotation of client-side kubectl apply: %v",
					obj.GetName(), corev1.LastAppliedConfigAnnotation, err)
			}
			stored := &unstructured.Unstructured{}
			stored.SetGroupVersionKind(obj.GroupVersionKind())
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), stored); err != nil {
				t.Fatal(err)
			}
			if got, want := stored.GetAnnotations()[corev1.LastAppliedConfigAnnotation],
				annotated.GetAnnotations()[corev1.LastAppliedConfigAnnotation]; got != want {
				t.Errorf("stored %s of CRD %s differs from the one sent (%d bytes stored, %d sent)",
					corev1.LastAppliedConfigAnnotation, obj.GetName(), len(got), len(want))
			}
		})
	}
	if applied != len(crds) {
		t.Errorf("config/default renders %d CRDs, want %d", applied, len(crds))
	}
}

// `kubectl apply -k config/samples -n NAMESPACE` creates every sample, and
// the kustomization lists every sample file.
func TestSamplesKustomizationApplies(t *testing.T) {
	testenv.RequireAssets(t)
	ctx := context.Background()
	objs := render(t, repoPath("config/samples"))

	rendered := map[string]bool{}
	for _, obj := range objs {
		rendered[objectID(obj)] = true
	}
	files, err := filepath.Glob(repoPath("config/samples/*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if filepath.Base(file) == "kustomization.yaml" {
			continue
		}
		for _, obj := range readObjects(t, file) {
			if !rendered[objectID(obj)] {
				t.Errorf("%s is in %s but not in config/samples/kustomization.yaml", objectID(obj), filepath.Base(file))
			}
		}
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "samples-"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), ns) })
	for _, obj := range objs {
		if obj.GetNamespace() != "" {
			t.Errorf("%s names namespace %q: kubectl apply -n would refuse it", objectID(obj), obj.GetNamespace())
		}
		obj.SetNamespace(ns.Name)
		annotated, _ := withLastApplied(t, obj)
		if err := k8s.Create(ctx, annotated); err != nil {
			t.Errorf("kubectl apply -k config/samples: %s was refused: %v", objectID(obj), err)
		}
	}
	if len(objs) < 3 {
		t.Errorf("config/samples renders %d objects, want at least 3 (rolling update, canary, setting)", len(objs))
	}
}

func objectID(obj *unstructured.Unstructured) string {
	return obj.GetKind() + " " + obj.GetName()
}

// readObjects parses every document of a YAML file.
func readObjects(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	var objs []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("%s: %v", file, err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
	if len(objs) == 0 {
		t.Fatalf("%s holds no object", file)
	}
	return objs
}
