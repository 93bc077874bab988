package inspect

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// Output formats of -o; the empty one is the table.
const (
	outputWide = "wide"
	outputJSON = "json"
	outputYAML = "yaml"
)

var outputFormats = []string{outputWide, outputJSON, outputYAML}

// outputFlags are -o of every list command, and -A of those that can read
// every namespace.
type outputFlags struct {
	format        string
	allNamespaces bool
}

func (f *outputFlags) addOutput(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.format, "output", "o", "", "Output format: wide, json or yaml (default: a table)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(outputFormats, cobra.ShellCompDirectiveNoFileComp))
}

func (f *outputFlags) addAllNamespaces(cmd *cobra.Command) {
	cmd.Flags().BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "List across every namespace, with a NAMESPACE column")
}

func (f *outputFlags) validate() error {
	if f.format != "" && !slices.Contains(outputFormats, f.format) {
		return fmt.Errorf("unknown output format %q: use wide, json or yaml", f.format)
	}
	return nil
}

// listing is what a list command found: the list object for -o json|yaml
// (or the one object asked for by name), and the same as a table.
type listing struct {
	// plural names the kind in "No ... found".
	plural string
	list   runtime.Object
	single runtime.Object
	table  *metav1.Table
}

// print writes l as f asks; an empty table is a note on the error stream,
// as kubectl's "No resources found", so that a script reading the
// standard output gets nothing.
func (f *outputFlags) print(o *cli.Options, namespace string, l listing) error {
	switch f.format {
	case outputJSON, outputYAML:
		obj := l.list
		if l.single != nil {
			obj = l.single
		}
		var p printers.ResourcePrinter = &printers.JSONPrinter{}
		if f.format == outputYAML {
			p = &printers.YAMLPrinter{}
		}
		return printTyped(p, obj, o.Out)
	}
	if len(l.table.Rows) == 0 {
		return noneFound(o.ErrOut, l.plural, namespace, f.allNamespaces)
	}
	p := printers.NewTablePrinter(printers.PrintOptions{Wide: f.format == outputWide, WithNamespace: f.allNamespaces})
	if err := p.PrintObj(l.table, o.Out); err != nil {
		return fmt.Errorf("printing the table: %w", err)
	}
	return nil
}

func noneFound(w io.Writer, plural, namespace string, allNamespaces bool) error {
	var err error
	if allNamespaces {
		_, err = fmt.Fprintf(w, "No %s found.\n", plural)
	} else {
		_, err = fmt.Fprintf(w, "No %s found in namespace %s.\n", plural, namespace)
	}
	return err
}

// printTyped prints obj with its apiVersion and kind, and those of the
// items of a list, which the API server leaves out of typed list items.
func printTyped(p printers.ResourcePrinter, obj runtime.Object, w io.Writer) error {
	if err := setKinds(obj); err != nil {
		return err
	}
	if err := p.PrintObj(obj, w); err != nil {
		return fmt.Errorf("printing: %w", err)
	}
	return nil
}

func setKinds(obj runtime.Object) error {
	if err := setKind(obj); err != nil {
		return err
	}
	if !apimeta.IsListType(obj) {
		return nil
	}
	items, err := apimeta.ExtractList(obj)
	if err != nil {
		return fmt.Errorf("reading the items of %T: %w", obj, err)
	}
	for _, item := range items {
		if err := setKind(item); err != nil {
			return err
		}
	}
	return nil
}

func setKind(obj runtime.Object) error {
	gvks, _, err := cli.Scheme().ObjectKinds(obj)
	if err != nil {
		return fmt.Errorf("finding the kind of %T: %w", obj, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvks[0])
	// kubectl leaves managed fields out unless asked: they are the API
	// server's bookkeeping, and longer than the object.
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return nil
}

// runList is the body of a list command: check the flags, connect, list
// with list, print.
func (f *outputFlags) runList(o *cli.Options,
	list func(ctx context.Context, c client.Client, namespace string, args []string) (listing, error),
) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := f.validate(); err != nil {
			return err
		}
		c, namespace, err := connect(o, f.allNamespaces, args)
		if err != nil {
			return err
		}
		l, err := list(cmd.Context(), c, namespace, args)
		if err != nil {
			return err
		}
		return f.print(o, namespace, l)
	}
}
