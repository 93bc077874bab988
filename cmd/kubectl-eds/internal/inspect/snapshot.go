package inspect

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// snapshot is everything status shows, read at one moment.
type snapshot struct {
	eds         *v1alpha1.ExtendedDaemonSet
	replicaSets []v1alpha1.ExtendedDaemonSetReplicaSet
	pods        []cli.Pod
	// events are the last events of the ExtendedDaemonSet, oldest first;
	// eventsErr is why they could not be read. A user who may not list
	// events still sees the rest.
	events    []corev1.Event
	eventsErr error
	// maintenance are the nodes in maintenance the agent runs on;
	// maintenanceErr is why they could not be listed.
	maintenance    []nodeInMaintenance
	maintenanceErr error
	now            time.Time
}

func takeSnapshot(ctx context.Context, c client.Client, key types.NamespacedName) (*snapshot, error) {
	eds, err := cli.GetExtendedDaemonSet(ctx, c, key)
	if err != nil {
		return nil, err
	}
	s := &snapshot{eds: eds}
	var sets v1alpha1.ExtendedDaemonSetReplicaSetList
	if err := c.List(ctx, &sets, client.InNamespace(key.Namespace),
		client.MatchingLabels{v1alpha1.ExtendedDaemonSetNameLabel: key.Name}); err != nil {
		return nil, explainList(err, "ExtendedDaemonSetReplicaSet", "extendeddaemonsetreplicasets", key.Namespace)
	}
	s.replicaSets = sets.Items
	// A DaemonSet that a workloadRef names and that is gone has no pods:
	// the conditions say what the controller makes of it.
	if s.pods, err = cli.PodsOf(ctx, c, eds); err != nil && !cli.IsDaemonSetMissing(err) {
		return nil, err
	}
	s.events, s.eventsErr = lastEvents(ctx, c, eds)
	s.maintenance, s.maintenanceErr = nodesInMaintenance(ctx, c, eds)
	s.now = time.Now()
	return s, nil
}

// replicaSet is the replica set of the snapshot called name, or nil.
func (s *snapshot) replicaSet(name string) *v1alpha1.ExtendedDaemonSetReplicaSet {
	for i := range s.replicaSets {
		if s.replicaSets[i].Name == name {
			return &s.replicaSets[i]
		}
	}
	return nil
}

// podsOn are the pods of the snapshot on node.
func (s *snapshot) podsOn(node string) []cli.Pod {
	var out []cli.Pod
	for _, pod := range s.pods {
		if pod.Spec.NodeName == node {
			out = append(out, pod)
		}
	}
	return out
}
