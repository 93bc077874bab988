package inspect

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// explainList is cli.Explain for listing kind (whose API resource is
// resource) in namespace, or in every namespace when it is empty (-A).
func explainList(err error, kind, resource, namespace string) error {
	switch {
	case namespace == "" && apierrors.IsForbidden(err):
		return fmt.Errorf("not allowed: %w; `kubectl auth can-i list %s --all-namespaces` tells whether your user may list them everywhere; without -A only one namespace is read",
			err, resource)
	case apierrors.IsForbidden(err), apimeta.IsNoMatchError(err):
		return cli.Explain(err, kind, types.NamespacedName{Namespace: namespace})
	case namespace == "":
		return fmt.Errorf("listing %ss in every namespace: %w", kind, err)
	}
	return fmt.Errorf("listing %ss in namespace %s: %w", kind, namespace, err)
}
