package inspect

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// Values of pods --select.
const (
	selectNotReady = "not-ready"
)

var podSelections = []string{roleCanary, roleActive, roleOld, selectNotReady}

func newPodsCommand(o *cli.Options) *cobra.Command {
	var flags outputFlags
	var selection string
	cmd := &cobra.Command{
		Use:   "pods NAME",
		Short: "List the pods of an ExtendedDaemonSet and their part in the rollout",
		Long: `List the pods of the ExtendedDaemonSet NAME, by node: the replica set each
belongs to, its role, readiness, status and restarts. ROLE is canary (a pod
of the canary replica set), active (of the active replica set) or old (of
a replica set the rollout replaces).

For an ExtendedDaemonSet whose spec.workloadRef names a DaemonSet, the pods
are the DaemonSet's, each of the replica set of its revision
(<name>-<controller-revision-hash>); they are printed as they are, without
labels of ours.

--select keeps only the canary, active or old pods, or those not ready.
-o wide adds the pod IP and the images; -o json and -o yaml print the pods.`,
		Example: `  kubectl eds pods agent
  kubectl eds pods agent --select canary
  kubectl eds pods agent --select not-ready -o wide`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: o.CompleteExtendedDaemonSets,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := flags.validate(); err != nil {
				return err
			}
			if selection != "" && !slices.Contains(podSelections, selection) {
				return fmt.Errorf("unknown --select %q: use one of %s", selection, strings.Join(podSelections, ", "))
			}
			c, namespace, err := connect(o, false, args)
			if err != nil {
				return err
			}
			l, err := listPods(cmd.Context(), c, types.NamespacedName{Namespace: namespace, Name: args[0]}, selection)
			if err != nil {
				return err
			}
			return flags.print(o, namespace, l)
		},
	}
	flags.addOutput(cmd)
	cmd.Flags().StringVar(&selection, "select", "", "Only the pods that are canary, active, old or not-ready")
	_ = cmd.RegisterFlagCompletionFunc("select", cobra.FixedCompletions(podSelections, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func listPods(ctx context.Context, c client.Client, key types.NamespacedName, selection string) (listing, error) {
	list := &corev1.PodList{}
	l := listing{plural: "pods of ExtendedDaemonSet " + key.Name, list: list}
	eds, err := cli.GetExtendedDaemonSet(ctx, c, key)
	if err != nil {
		return l, err
	}
	pods, err := cli.PodsOf(ctx, c, eds)
	if err != nil {
		return l, err
	}
	pods = slices.DeleteFunc(pods, func(p cli.Pod) bool { return !selected(eds, p, selection) })
	list.Items = make([]corev1.Pod, 0, len(pods))
	for _, p := range pods {
		list.Items = append(list.Items, *p.Pod)
	}
	l.table = podTable(eds, pods, time.Now())
	return l, nil
}

func selected(eds *v1alpha1.ExtendedDaemonSet, pod cli.Pod, selection string) bool {
	switch selection {
	case "":
		return true
	case selectNotReady:
		return !podReady(pod.Pod)
	}
	return podRole(eds, pod.ReplicaSet) == selection
}

func podTable(eds *v1alpha1.ExtendedDaemonSet, pods []cli.Pod, now time.Time) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		column("Name"), column("Node"), column("Replica Set"), column("Role"), column("Ready"), column("Status"),
		column("Restarts"), column("Age"),
		wideColumn("IP"), wideColumn("Images"),
	}}
	for _, p := range pods {
		pod := p.Pod
		t.Rows = append(t.Rows, row(pod, pod.Name, orNone(pod.Spec.NodeName),
			orNone(p.ReplicaSet), podRole(eds, p.ReplicaSet),
			readyContainers(pod), podStatus(pod), restarts(pod), age(pod.CreationTimestamp, now),
			orNone(pod.Status.PodIP), images(pod.Spec)))
	}
	return t
}
