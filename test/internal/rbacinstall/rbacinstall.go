// Package rbacinstall installs the manager's identity and grants as
// config/default ships them, so that tests can run the controllers as the
// manager's ServiceAccount on an API server that enforces RBAC.
package rbacinstall

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

// The manager's identity as config/default names it.
const (
	Namespace      = "extendeddaemonset-system"
	ServiceAccount = "eds-controller-manager"
)

// kinds are what Install creates, in creation order: the namespace first,
// for the namespaced objects after it.
var kinds = []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}

// Install creates the namespace, ServiceAccount, roles and bindings of
// config/default, rendered as `kubectl apply -k` renders them. c must be
// allowed to grant what the roles grant.
func Install(ctx context.Context, c client.Client) error {
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).
		Run(filesys.MakeFsOnDisk(), filepath.Join(testenv.RepoRoot(), "config", "default"))
	if err != nil {
		return fmt.Errorf("rendering config/default: %w", err)
	}
	var objs []*unstructured.Unstructured
	for _, res := range resMap.Resources() {
		m, err := res.Map()
		if err != nil {
			return fmt.Errorf("rendering config/default: %w", err)
		}
		if obj := (&unstructured.Unstructured{Object: m}); slices.Contains(kinds, obj.GetKind()) {
			objs = append(objs, obj)
		}
	}
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int {
		return slices.Index(kinds, a.GetKind()) - slices.Index(kinds, b.GetKind())
	})
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}
