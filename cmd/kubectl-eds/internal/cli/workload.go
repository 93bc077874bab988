package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// An ExtendedDaemonSet rolls out either a template of its own, whose pods
// carry its labels, or, when spec.workloadRef names a DaemonSet, that
// DaemonSet's: its own spec.template is then empty, the template rolled
// out is the DaemonSet's, and the pods are the DaemonSet's, which carry
// none of our labels. Each of those belongs to the replica set of its
// revision, which the controller names <name>-<controller-revision-hash>.
// Every command reads the template and the pods through CurrentTemplate
// and PodsOf, so that none has to tell the two apart.

// Pod is a pod an ExtendedDaemonSet rolls out, and the name of the replica
// set it belongs to ("" for none).
type Pod struct {
	*corev1.Pod
	ReplicaSet string
}

// DaemonSetOf reads the DaemonSet eds's spec.workloadRef names.
func DaemonSetOf(ctx context.Context, c client.Client, eds *v1alpha1.ExtendedDaemonSet) (*appsv1.DaemonSet, error) {
	key := types.NamespacedName{Namespace: eds.Namespace, Name: eds.Spec.WorkloadRef.Name}
	ds := &appsv1.DaemonSet{}
	switch err := c.Get(ctx, key, ds); {
	case apierrors.IsNotFound(err):
		return nil, &missingDaemonSetError{eds: eds.Name, key: key}
	case err != nil:
		return nil, fmt.Errorf("the DaemonSet spec.workloadRef of ExtendedDaemonSet %s names: %w", eds.Name, Explain(err, "DaemonSet", key))
	}
	return ds, nil
}

// missingDaemonSetError is a workloadRef naming no DaemonSet: the
// ExtendedDaemonSet rolls nothing out until it exists.
type missingDaemonSetError struct {
	eds string
	key types.NamespacedName
}

func (e *missingDaemonSetError) Error() string {
	return fmt.Sprintf("DaemonSet %q, which spec.workloadRef of ExtendedDaemonSet %s names, not found in namespace %q",
		e.key.Name, e.eds, e.key.Namespace)
}

// IsDaemonSetMissing says whether err is DaemonSetOf's for a DaemonSet
// that does not exist.
func IsDaemonSetMissing(err error) bool {
	var missing *missingDaemonSetError
	return errors.As(err, &missing)
}

// CurrentTemplate is the pod template eds rolls out now: its
// spec.template, or the DaemonSet's its workloadRef names.
func CurrentTemplate(ctx context.Context, c client.Client, eds *v1alpha1.ExtendedDaemonSet) (*corev1.PodTemplateSpec, error) {
	if eds.Spec.WorkloadRef == nil {
		return &eds.Spec.Template, nil
	}
	ds, err := DaemonSetOf(ctx, c, eds)
	if err != nil {
		return nil, err
	}
	return &ds.Spec.Template, nil
}

// PodsOf lists the pods eds rolls out, by node then name: those carrying
// its name label, or those the DaemonSet its workloadRef names controls.
func PodsOf(ctx context.Context, c client.Client, eds *v1alpha1.ExtendedDaemonSet) ([]Pod, error) {
	var list corev1.PodList
	own := func(*corev1.Pod) bool { return true }
	replicaSet := func(pod *corev1.Pod) string { return pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel] }
	opts := []client.ListOption{client.InNamespace(eds.Namespace), client.MatchingLabels{v1alpha1.ExtendedDaemonSetNameLabel: eds.Name}}
	if eds.Spec.WorkloadRef != nil {
		ds, err := DaemonSetOf(ctx, c, eds)
		if err != nil {
			return nil, err
		}
		selector, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
		if err != nil {
			return nil, fmt.Errorf("the selector of DaemonSet %s: %w", ds.Name, err)
		}
		opts = []client.ListOption{client.InNamespace(eds.Namespace), client.MatchingLabelsSelector{Selector: selector}}
		// The selector may match pods of another controller: only the
		// DaemonSet's own are rolled out.
		own = func(pod *corev1.Pod) bool {
			ref := metav1.GetControllerOf(pod)
			return ref != nil && ref.UID == ds.UID
		}
		replicaSet = func(pod *corev1.Pod) string {
			return WorkloadReplicaSetName(eds.Name, pod.Labels[appsv1.DefaultDaemonSetUniqueLabelKey])
		}
	}
	if err := c.List(ctx, &list, opts...); err != nil {
		return nil, explainPodList(err, eds.Namespace)
	}
	var pods []Pod
	for i := range list.Items {
		if pod := &list.Items[i]; own(pod) {
			pods = append(pods, Pod{Pod: pod, ReplicaSet: replicaSet(pod)})
		}
	}
	slices.SortFunc(pods, func(a, b Pod) int {
		return cmp.Or(cmp.Compare(a.Spec.NodeName, b.Spec.NodeName), cmp.Compare(a.Name, b.Name))
	})
	return pods, nil
}

// WorkloadReplicaSetName is the name of the replica set the controller
// keeps for the revision hash of the DaemonSet the ExtendedDaemonSet eds
// references; "" for a pod without a revision.
func WorkloadReplicaSetName(eds, hash string) string {
	if hash == "" {
		return ""
	}
	return eds + "-" + hash
}

func explainPodList(err error, namespace string) error {
	if apierrors.IsForbidden(err) || apimeta.IsNoMatchError(err) {
		return Explain(err, "Pod", types.NamespacedName{Namespace: namespace})
	}
	return fmt.Errorf("listing Pods in namespace %s: %w", namespace, err)
}
