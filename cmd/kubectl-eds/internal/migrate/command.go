package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// Commands are the commands of this package: migrate.
func Commands(o *cli.Options) []*cobra.Command {
	return []*cobra.Command{newMigrateCommand(o)}
}

func newMigrateCommand(o *cli.Options) *cobra.Command {
	var file, output, ref string
	cmd := &cobra.Command{
		Use:   "migrate -f FILE | --ref DAEMONSET [-f FILE]",
		Short: "Turn DaemonSet and datadoghq.com ExtendedDaemonSet manifests into ExtendedDaemonSets",
		Long: `migrate turns the manifests of FILE (- for the standard input; several
documents separated by ---, or a List) into extendeddaemonset.io/v1alpha1
objects, printed on the standard output:

- an apps/v1 DaemonSet becomes an ExtendedDaemonSet of the same name that
  replaces the DaemonSet's pods node by node (annotation
  extendeddaemonset.io/old-daemonset), with its selector, template,
  minReadySeconds, revisionHistoryLimit and rolling update limits;
- an ExtendedDaemonSet or ExtendedDaemonsetSetting of the original project
  (datadoghq.com/v1alpha1) becomes ours, field by field, annotations
  renamed.

Fields with no meaning here are left out with a warning that names them;
warnings, and the steps that put the result in place without a node going
without its pod, go to the standard error. The cluster is not contacted.

--ref DAEMONSET converts nothing: it writes an ExtendedDaemonSet of the
DaemonSet's name whose spec.workloadRef names the DaemonSet, which keeps
its template, selector and pods and stays its owner's (git, a Helm chart);
the ExtendedDaemonSet rolls out each change of its template through a
canary. The DaemonSet's minReadySeconds and rollingUpdate.maxUnavailable
carry over. The DaemonSet is read from the cluster (-n selects the
namespace), or from FILE when -f is given. A DaemonSet whose
updateStrategy.type is not OnDelete gets a warning that says where to set
it: the ExtendedDaemonSet stalls until it is.`,
		Example: `  # Migrate a DaemonSet from the cluster
  kubectl get daemonset fluent-bit -n logging -o yaml | kubectl eds migrate -f - > fluent-bit.eds.yaml

  # Migrate a file of the original project's ExtendedDaemonSets, as JSON
  kubectl eds migrate -f agent.yaml -o json

  # Canary the DaemonSet cilium where it stands, without converting it
  kubectl eds migrate --ref cilium -n kube-system > cilium.eds.yaml

  # The same from the manifests a chart renders
  helm template cilium cilium/cilium -n kube-system | kubectl eds migrate --ref cilium -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != outputYAML && output != outputJSON {
				return fmt.Errorf("unknown output format %q: -o takes yaml or json", output)
			}
			switch {
			case ref != "":
				return runReference(cmd.Context(), o, file, ref, output)
			case file == "":
				return errors.New(`required flag "filename" not set: -f FILE names the manifests to migrate ` +
					"(or --ref DAEMONSET writes an ExtendedDaemonSet that references a DaemonSet)")
			}
			return run(o, file, output)
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", "the manifest to migrate, - for the standard input")
	cmd.Flags().StringVarP(&output, "output", "o", outputYAML, "output format: yaml or json")
	cmd.Flags().StringVar(&ref, "ref", "", "write an ExtendedDaemonSet whose workloadRef names this DaemonSet, read from the cluster or from -f")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{outputYAML, outputJSON}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func run(o *cli.Options, file, output string) error {
	in, source, closeInput, err := open(o, file)
	if err != nil {
		return err
	}
	defer closeInput()
	docs, err := readDocuments(in)
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	result, err := migrateAll(docs)
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	if err := printObjects(o.Out, result.Objects, output); err != nil {
		return err
	}
	return printReport(o.ErrOut, result)
}

// open opens file, or the standard input for -, and names it for errors.
func open(o *cli.Options, file string) (in io.Reader, source string, closeInput func(), err error) {
	if file == "-" {
		return o.In, "standard input", func() {}, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, "", nil, fmt.Errorf("reading the manifest: %w", err)
	}
	return f, file, func() { _ = f.Close() }, nil
}

// runReference prints an ExtendedDaemonSet that references the DaemonSet
// name, read from file, or from the cluster without one.
func runReference(ctx context.Context, o *cli.Options, file, name, output string) error {
	var docs []document
	source := "the cluster"
	if file != "" {
		in, from, closeInput, err := open(o, file)
		if err != nil {
			return err
		}
		defer closeInput()
		source = from
		if docs, err = readDocuments(in); err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
	} else {
		doc, err := clusterDaemonSet(ctx, o, name)
		if err != nil {
			return err
		}
		docs = []document{doc}
	}
	result, err := migrateReference(docs, name)
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	if err := printObjects(o.Out, result.Objects, output); err != nil {
		return err
	}
	return printReport(o.ErrOut, result)
}
