package cli

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// CompleteExtendedDaemonSets completes the first argument with the names
// of the ExtendedDaemonSets of the namespace.
func (o *Options) CompleteExtendedDaemonSets(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var list v1alpha1.ExtendedDaemonSetList
	return o.completeNames(cmd.Context(), &list, toComplete, func() []string {
		names := make([]string, 0, len(list.Items))
		for _, eds := range list.Items {
			names = append(names, eds.Name)
		}
		return names
	})
}

func (o *Options) completeNamespaces(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	var list corev1.NamespaceList
	return o.completeNames(cmd.Context(), &list, toComplete, func() []string {
		names := make([]string, 0, len(list.Items))
		for _, ns := range list.Items {
			names = append(names, ns.Name)
		}
		return names
	})
}

// completeNames lists into list and offers the names with the prefix
// typed so far; a cluster it cannot reach completes nothing, silently, as
// kubectl does.
func (o *Options) completeNames(ctx context.Context, list client.ObjectList, prefix string, names func() []string) ([]string, cobra.ShellCompDirective) {
	c, err := o.Client()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var opts []client.ListOption
	if _, isNamespaces := list.(*corev1.NamespaceList); !isNamespaces {
		ns, err := o.Namespace()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		opts = append(opts, client.InNamespace(ns))
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := c.List(ctx, list, opts...); err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, n := range names() {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
