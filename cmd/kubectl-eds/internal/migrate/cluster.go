package migrate

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// clusterDaemonSet reads the DaemonSet name of the namespace the flags
// select, as the document `kubectl get daemonset NAME -o yaml` would give.
func clusterDaemonSet(ctx context.Context, o *cli.Options, name string) (document, error) {
	c, err := o.Client()
	if err != nil {
		return document{}, err
	}
	namespace, err := o.Namespace()
	if err != nil {
		return document{}, err
	}
	key := types.NamespacedName{Namespace: namespace, Name: name}
	ds := &appsv1.DaemonSet{}
	if err := c.Get(ctx, key, ds); err != nil {
		return document{}, cli.Explain(err, "DaemonSet", key)
	}
	// A typed read leaves the kind out.
	ds.APIVersion, ds.Kind = appsV1, kindDaemonSet
	data, err := json.Marshal(ds)
	if err != nil {
		return document{}, fmt.Errorf("encoding DaemonSet %s: %w", key, err)
	}
	object, err := decodeYAML(data)
	if err != nil {
		return document{}, fmt.Errorf("decoding DaemonSet %s: %w", key, err)
	}
	obj, _ := object.(map[string]any)
	return document{position: "DaemonSet " + key.String(), object: obj}, nil
}
