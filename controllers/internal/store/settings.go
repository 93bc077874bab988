package store

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// ListSettings returns the resource override settings of a namespace: the
// replica sets read those of their ExtendedDaemonSet for the pods they
// create, the Setting reconciler validates them together.
func ListSettings(ctx context.Context, c client.Reader, namespace string) ([]v1alpha1.ExtendedDaemonsetSetting, error) {
	var list v1alpha1.ExtendedDaemonsetSettingList
	if err := c.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing settings: %w", err)
	}
	return list.Items, nil
}
