package manifests

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/kubeapply"
)

// render builds a kustomization the way `kubectl apply -k` does.
func render(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := kubeapply.Render(dir)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func TestDefaultKustomizationRendersAndApplies(t *testing.T) {
	testenv.RequireAssets(t)
	objs := render(t, repoPath("config/default"))
	kinds := map[string]int{}
	for _, obj := range objs {
		kinds[obj.GetKind()]++
		if obj.GetKind() != "CustomResourceDefinition" && obj.GetKind() != "ClusterRole" &&
			obj.GetKind() != "ClusterRoleBinding" && obj.GetKind() != "Namespace" &&
			obj.GetNamespace() != "extendeddaemonset-system" {
			t.Errorf("%s %s is not in the controller's namespace: %q", obj.GetKind(), obj.GetName(), obj.GetNamespace())
		}
	}
	for kind, want := range map[string]int{
		"CustomResourceDefinition": 3, "ClusterRole": 2, "ClusterRoleBinding": 1, "Role": 1,
		"RoleBinding": 1, "ServiceAccount": 1, "Deployment": 1, "Namespace": 1, "Service": 1,
	} {
		if kinds[kind] != want {
			t.Errorf("want %d %s in config/default, rendered %d", want, kind, kinds[kind])
		}
	}

	// render orders namespaces first, as kubectl orders an apply.
	ctx := context.Background()
	for _, obj := range objs {
		// Server-side apply with force, as `kubectl apply --server-side` does,
		// since the CRDs are already installed by the test environment.
		if err := k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("manifests-test"), client.ForceOwnership); err != nil {
			t.Errorf("applying %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
}
