package migrate

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"
)

// Output formats of -o.
const (
	outputYAML = "yaml"
	outputJSON = "json"
)

// printObjects writes objects as YAML documents separated by ---, or as
// JSON: one object alone, several in a List, as kubectl prints them.
func printObjects(w io.Writer, objects []map[string]any, format string) error {
	switch format {
	case outputYAML:
		for i, obj := range objects {
			out, err := yaml.Marshal(obj)
			if err != nil {
				return fmt.Errorf("encoding YAML: %w", err)
			}
			if i > 0 {
				if _, err := io.WriteString(w, "---\n"); err != nil {
					return fmt.Errorf("writing the manifest: %w", err)
				}
			}
			if _, err := w.Write(out); err != nil {
				return fmt.Errorf("writing the manifest: %w", err)
			}
		}
		return nil
	case outputJSON:
		var value any = map[string]any{"apiVersion": "v1", "kind": "List", "items": objects}
		if len(objects) == 1 {
			value = objects[0]
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "    ")
		if err := enc.Encode(value); err != nil {
			return fmt.Errorf("writing the manifest: %w", err)
		}
		return nil
	}
	return fmt.Errorf("unknown output format %q: -o takes yaml or json", format)
}

// printReport writes the warnings, notes and steps of result, for a
// person: the manifest alone goes to the standard output.
func printReport(w io.Writer, result *outcome) error {
	var b strings.Builder
	for _, line := range result.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", line)
	}
	for _, line := range result.Notes {
		fmt.Fprintf(&b, "note: %s\n", line)
	}
	for _, steps := range result.Steps {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s\n", steps.Title)
		for i, item := range steps.Items {
			fmt.Fprintf(&b, "  %d. %s\n", i+1, strings.ReplaceAll(item, "\n", "\n     "))
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}
