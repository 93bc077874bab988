package cli

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// GetExtendedDaemonSet reads one ExtendedDaemonSet, with an error that says
// what to do when it cannot.
func GetExtendedDaemonSet(ctx context.Context, c client.Client, key types.NamespacedName) (*v1alpha1.ExtendedDaemonSet, error) {
	eds := &v1alpha1.ExtendedDaemonSet{}
	if err := c.Get(ctx, key, eds); err != nil {
		return nil, Explain(err, "ExtendedDaemonSet", key)
	}
	return eds, nil
}

// Explain turns an API error about the object of kind at key into one a
// person can act on: what is missing or refused, and the next command.
func Explain(err error, kind string, key types.NamespacedName) error {
	switch {
	case apierrors.IsNotFound(err):
		if kind == "ExtendedDaemonSet" {
			return fmt.Errorf("ExtendedDaemonSet %q not found in namespace %q: `kubectl eds get -n %s` lists them, -A lists every namespace's",
				key.Name, key.Namespace, key.Namespace)
		}
		return fmt.Errorf("%s %q not found in namespace %q", kind, key.Name, key.Namespace)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("not allowed: %w; `kubectl auth can-i --list -n %s` shows what your user may do, and an ExtendedDaemonSet role must allow it",
			err, key.Namespace)
	case apimeta.IsNoMatchError(err):
		return fmt.Errorf("the cluster does not know %ss: install the CRDs (`kubectl apply -k config/crd`) first: %w", kind, err)
	}
	return fmt.Errorf("reading %s %s: %w", kind, key, err)
}
