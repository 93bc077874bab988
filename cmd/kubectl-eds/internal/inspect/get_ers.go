package inspect

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

func newGetReplicaSetsCommand(o *cli.Options) *cobra.Command {
	var flags outputFlags
	cmd := &cobra.Command{
		Use:   "get-ers [NAME]",
		Short: "List the replica sets of ExtendedDaemonSets",
		Long: `List the ExtendedDaemonSetReplicaSets of the namespace (every namespace with
-A), or only those of the ExtendedDaemonSet NAME: one per template an
ExtendedDaemonSet has run and still keeps, oldest revision first, with the
columns of 'kubectl get ers'. STATUS is the part a replica set plays:
Active (its template runs on every node), Canary, or Unknown (an old one,
kept to roll back to). -o wide adds the ExtendedDaemonSet, the revision,
and the images; -o json and -o yaml print the objects.`,
		Example: `  kubectl eds get-ers
  kubectl eds get-ers agent -o wide`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: o.CompleteExtendedDaemonSets,
		RunE:              flags.runList(o, listReplicaSets),
	}
	flags.addOutput(cmd)
	flags.addAllNamespaces(cmd)
	return cmd
}

func listReplicaSets(ctx context.Context, c client.Client, namespace string, args []string) (listing, error) {
	list := &v1alpha1.ExtendedDaemonSetReplicaSetList{}
	l := listing{plural: "ExtendedDaemonSetReplicaSets", list: list}
	opts := []client.ListOption{client.InNamespace(namespace)}
	if len(args) == 1 {
		// The ExtendedDaemonSet is read first so that a misspelt name says
		// so, rather than listing nothing.
		if _, err := cli.GetExtendedDaemonSet(ctx, c, types.NamespacedName{Namespace: namespace, Name: args[0]}); err != nil {
			return l, err
		}
		opts = append(opts, client.MatchingLabels{v1alpha1.ExtendedDaemonSetNameLabel: args[0]})
	}
	if err := c.List(ctx, list, opts...); err != nil {
		return l, explainList(err, "ExtendedDaemonSetReplicaSet", "extendeddaemonsetreplicasets", namespace)
	}
	sortReplicaSets(list.Items)
	l.table = replicaSetTable(list.Items, time.Now())
	return l, nil
}

// sortReplicaSets orders replica sets by namespace, ExtendedDaemonSet and
// revision: the history of each ExtendedDaemonSet reads top down. Names
// are random and cannot order them.
func sortReplicaSets(items []v1alpha1.ExtendedDaemonSetReplicaSet) {
	slices.SortStableFunc(items, func(a, b v1alpha1.ExtendedDaemonSetReplicaSet) int {
		return cmp.Or(
			cmp.Compare(a.Namespace, b.Namespace),
			cmp.Compare(a.Labels[v1alpha1.ExtendedDaemonSetNameLabel], b.Labels[v1alpha1.ExtendedDaemonSetNameLabel]),
			cmp.Compare(revision(&a), revision(&b)),
			cmp.Compare(a.Name, b.Name),
		)
	})
}

// revision is the replica set's revision number, 0 when it has none.
func revision(ers *v1alpha1.ExtendedDaemonSetReplicaSet) int {
	n, err := strconv.Atoi(ers.Annotations[v1alpha1.RevisionAnnotation])
	if err != nil {
		return 0
	}
	return n
}

func replicaSetTable(items []v1alpha1.ExtendedDaemonSetReplicaSet, now time.Time) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		column("Name"), column("Status"), column("Desired"), column("Current"), column("Ready"), column("Available"),
		column("Node Selector"), column("Age"),
		wideColumn("ExtendedDaemonSet"), wideColumn("Revision"), wideColumn("Up-To-Date"), wideColumn("Images"),
	}}
	for i := range items {
		ers := &items[i]
		st := ers.Status
		t.Rows = append(t.Rows, row(ers, ers.Name, orNone(string(st.Status)), st.Desired, st.Current, st.Ready, st.Available,
			jsonCell(ers.Spec.Template.Spec.NodeSelector), age(ers.CreationTimestamp, now),
			orNone(ers.Labels[v1alpha1.ExtendedDaemonSetNameLabel]), orNone(ers.Annotations[v1alpha1.RevisionAnnotation]),
			st.UpToDate, images(ers.Spec.Template.Spec)))
	}
	return t
}
