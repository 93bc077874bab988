package about

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/internal/version"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// Commands are the commands of this package: version.
func Commands(o *cli.Options) []*cobra.Command {
	return []*cobra.Command{newVersionCommand(o)}
}

// Output formats of -o; the empty one is a line.
const (
	outputJSON = "json"
	outputYAML = "yaml"
)

func newVersionCommand(o *cli.Options) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version [-o json|yaml]",
		Short: "Print the plugin's version, commit and build date",
		Long: `version prints the version of kubectl-eds, the commit it was built from,
the date of its build, and its Go version and platform. The cluster is not
contacted.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return printVersion(o, version.Get(), output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format: json or yaml (default: one line)")
	_ = cmd.RegisterFlagCompletionFunc("output",
		cobra.FixedCompletions([]string{outputJSON, outputYAML}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func printVersion(o *cli.Options, info version.Info, output string) error {
	var out bytes.Buffer
	switch output {
	case "":
		fmt.Fprintf(&out, "kubectl-eds %s\n", info)
	case outputJSON:
		enc := json.NewEncoder(&out)
		enc.SetIndent("", "    ")
		if err := enc.Encode(info); err != nil {
			return fmt.Errorf("encoding JSON: %w", err)
		}
	case outputYAML:
		encoded, err := yaml.Marshal(info)
		if err != nil {
			return fmt.Errorf("encoding YAML: %w", err)
		}
		out.Write(encoded)
	default:
		return fmt.Errorf("unknown output format %q: -o takes json or yaml", output)
	}
	if _, err := out.WriteTo(o.Out); err != nil {
		return fmt.Errorf("printing the version: %w", err)
	}
	return nil
}
