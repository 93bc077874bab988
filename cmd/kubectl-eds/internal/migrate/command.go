package migrate

import (
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
	var file, output string
	cmd := &cobra.Command{
		Use:   "migrate -f FILE",
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
without its pod, go to the standard error. The cluster is not contacted.`,
		Example: `  # Migrate a DaemonSet from the cluster
  kubectl get daemonset fluent-bit -n logging -o yaml | kubectl eds migrate -f - > fluent-bit.eds.yaml

  # Migrate a file of the original project's ExtendedDaemonSets, as JSON
  kubectl eds migrate -f agent.yaml -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != outputYAML && output != outputJSON {
				return fmt.Errorf("unknown output format %q: -o takes yaml or json", output)
			}
			return run(o, file, output)
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", "the manifest to migrate, - for the standard input")
	cmd.Flags().StringVarP(&output, "output", "o", outputYAML, "output format: yaml or json")
	_ = cmd.MarkFlagRequired("filename")
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
