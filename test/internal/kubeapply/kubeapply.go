// Package kubeapply renders a kustomization and applies its objects the
// way `kubectl apply -k` does by default, client-side: each object keeps
// its whole JSON in the last-applied-configuration annotation, which the
// API server limits, with every other annotation, to 256 KiB. Argo CD syncs
// the same way unless told otherwise, so this is what a large CRD must pass.
package kubeapply

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kubectlutil "k8s.io/kubectl/pkg/util"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Render builds the kustomization in dir as `kubectl apply -k` does, and
// orders the objects as kubectl applies them: namespaces and CRDs first.
func Render(dir string) ([]*unstructured.Unstructured, error) {
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	objs := make([]*unstructured.Unstructured, 0, resMap.Size())
	for _, res := range resMap.Resources() {
		// Through JSON, so that numbers are int64 and float64 as in every
		// object a client reads.
		data, err := res.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("kustomize build %s: %s: %w", dir, res.CurId(), err)
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(data); err != nil {
			return nil, fmt.Errorf("kustomize build %s: %s: %w", dir, res.CurId(), err)
		}
		objs = append(objs, obj)
	}
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int {
		return cmp.Compare(kindRank(a.GetKind()), kindRank(b.GetKind()))
	})
	return objs, nil
}

func kindRank(kind string) int {
	switch kind {
	case "Namespace":
		return 0
	case "CustomResourceDefinition":
		return 1
	default:
		return 2
	}
}

// Annotated is a copy of obj with the last-applied annotation that
// client-side `kubectl apply` writes, made by kubectl's own code.
func Annotated(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	annotated := obj.DeepCopy()
	if err := kubectlutil.CreateApplyAnnotation(annotated, unstructured.UnstructuredJSONScheme); err != nil {
		return nil, fmt.Errorf("annotating %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return annotated, nil
}

// ClientSide creates obj with its last-applied annotation, or, if it
// exists, replaces it keeping the stored resource version, as a first
// `kubectl apply` of a file over an object it did not create does.
func ClientSide(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	want, err := Annotated(obj)
	if err != nil {
		return err
	}
	err = c.Create(ctx, want)
	if apierrors.IsAlreadyExists(err) {
		current := &unstructured.Unstructured{}
		current.SetGroupVersionKind(want.GroupVersionKind())
		if err = c.Get(ctx, client.ObjectKeyFromObject(want), current); err == nil {
			want.SetResourceVersion(current.GetResourceVersion())
			err = c.Update(ctx, want)
		}
	}
	if err != nil {
		return fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}
