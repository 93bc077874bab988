package inspect

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

func newGetCommand(o *cli.Options) *cobra.Command {
	var flags outputFlags
	cmd := &cobra.Command{
		Use:   "get [NAME]",
		Short: "List ExtendedDaemonSets with their rollout counters",
		Long: `List the ExtendedDaemonSets of the namespace (every namespace with -A), or
the one named, with the columns of 'kubectl get eds': pods desired, current,
ready, up to date and available, the state, and the active and canary
replica sets. -o wide adds the reason of the state, the containers and
their images; -o json and -o yaml print the objects.`,
		Example: `  kubectl eds get
  kubectl eds get -A
  kubectl eds get agent -o yaml`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: o.CompleteExtendedDaemonSets,
		RunE:              flags.runList(o, listExtendedDaemonSets),
	}
	flags.addOutput(cmd)
	flags.addAllNamespaces(cmd)
	return cmd
}

// connect is the client and the namespace a list command reads ("" for
// every namespace); a name asked for across every namespace would be
// ambiguous, as kubectl says too.
func connect(o *cli.Options, allNamespaces bool, args []string) (client.Client, string, error) {
	if allNamespaces && len(args) > 0 {
		return nil, "", errors.New("a NAME cannot be looked for across every namespace: drop -A and give -n NAMESPACE")
	}
	c, err := o.Client()
	if err != nil {
		return nil, "", err
	}
	if allNamespaces {
		return c, "", nil
	}
	namespace, err := o.Namespace()
	return c, namespace, err
}

func listExtendedDaemonSets(ctx context.Context, c client.Client, namespace string, args []string) (listing, error) {
	list := &v1alpha1.ExtendedDaemonSetList{}
	l := listing{plural: "ExtendedDaemonSets", list: list}
	if len(args) == 1 {
		eds, err := cli.GetExtendedDaemonSet(ctx, c, types.NamespacedName{Namespace: namespace, Name: args[0]})
		if err != nil {
			return l, err
		}
		list.Items = []v1alpha1.ExtendedDaemonSet{*eds}
		l.single = eds
	} else if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return l, explainList(err, "ExtendedDaemonSet", "extendeddaemonsets", namespace)
	}
	templates, err := currentTemplates(ctx, c, list.Items)
	if err != nil {
		return l, err
	}
	l.table = extendedDaemonSetTable(list.Items, templates, time.Now())
	return l, nil
}

// currentTemplates are the templates items roll out now, by index: for
// one whose workloadRef names a DaemonSet, the DaemonSet's (nil when it is
// gone: its status says so, and the others are still listed).
func currentTemplates(ctx context.Context, c client.Client, items []v1alpha1.ExtendedDaemonSet) ([]*corev1.PodTemplateSpec, error) {
	templates := make([]*corev1.PodTemplateSpec, len(items))
	for i := range items {
		template, err := cli.CurrentTemplate(ctx, c, &items[i])
		if err != nil && !cli.IsDaemonSetMissing(err) {
			return nil, err
		}
		templates[i] = template
	}
	return templates, nil
}

// extendedDaemonSetTable has the printer columns of the CRD, and more
// with -o wide: the containers and images are those of templates, the
// items' current ones.
func extendedDaemonSetTable(items []v1alpha1.ExtendedDaemonSet, templates []*corev1.PodTemplateSpec, now time.Time) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		column("Name"), column("Desired"), column("Current"), column("Ready"), column("Up-To-Date"), column("Available"),
		column("Status"), column("Active RS"), column("Canary RS"), column("Age"),
		wideColumn("Reason"), wideColumn("Containers"), wideColumn("Images"),
	}}
	for i := range items {
		eds := &items[i]
		st := eds.Status
		canary := ""
		if st.Canary != nil {
			canary = st.Canary.ReplicaSet
		}
		containerCell, imageCell := "<none>", "<none>"
		if template := templates[i]; template != nil {
			containerCell, imageCell = containerNames(template.Spec), images(template.Spec)
		}
		t.Rows = append(t.Rows, row(eds, eds.Name, st.Desired, st.Current, st.Ready, st.UpToDate, st.Available,
			orNone(string(st.State)), orNone(st.ActiveReplicaSet), orNone(canary), age(eds.CreationTimestamp, now),
			orNone(st.Reason), containerCell, imageCell))
	}
	return t
}
