// Command crdtrim removes from controller-gen's CRDs the descriptions of the
// Kubernetes types they embed: the fields of the pod template's ObjectMeta
// and PodSpec. Those descriptions are two thirds of each CRD, and client-side
// `kubectl apply` (and Argo CD's default sync) copies the whole object into
// the kubectl.kubernetes.io/last-applied-configuration annotation, which the
// API server refuses above 256 KiB. Our own fields, and the template field
// itself, keep their descriptions for `kubectl explain`; the Kubernetes API
// reference documents the pod's fields.
//
//	go run ./test/crdtrim DIR...
//
// It also makes the ExtendedDaemonSet's pod template optional below its
// top: the containers the embedded PodSpec requires are not required of an
// ExtendedDaemonSet whose workloadRef names the DaemonSet rolled out, and a
// rule of our own (x-kubernetes-validations) requires them of any other.
// controller-gen cannot drop a requirement of an embedded Kubernetes type.
//
// It rewrites every YAML file of each directory in place, deleting the lines
// of those descriptions and of that requirement only, so the rest of
// controller-gen's output stays byte for byte and a second run changes
// nothing. `make manifests` runs it right after controller-gen.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// embedded are the schemas, as field paths from a version's
// openAPIV3Schema, whose inner descriptions are Kubernetes' own. Their own
// description stays. Each must be found in at least one CRD, so that a
// renamed field cannot silently bring the descriptions back.
var embedded = []string{
	"spec.template.metadata",
	"spec.template.spec",
}

// optionalTemplate is the kind whose spec.template.spec requires nothing:
// its workloadRef may name the workload instead.
const optionalTemplate = "ExtendedDaemonSet"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: crdtrim DIR...")
		os.Exit(2)
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "crdtrim:", err)
		os.Exit(1)
	}
}

func run(dirs []string) error {
	found := map[string]bool{}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			return err
		}
		for _, file := range files {
			if err := trimFile(file, found); err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
		}
	}
	for _, path := range append(embedded, optionalTemplate+" spec.template.spec.required") {
		if !found[path] {
			return fmt.Errorf("no CRD in %s has the field %s: update the list of embedded Kubernetes types", strings.Join(dirs, ", "), path)
		}
	}
	return nil
}

func trimFile(file string, found map[string]bool) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	out, err := trim(data, found)
	if err != nil || bytes.Equal(out, data) {
		return err
	}
	info, err := os.Stat(file)
	if err != nil {
		return err
	}
	return os.WriteFile(file, out, info.Mode().Perm())
}

// trim returns data without the descriptions below the embedded schemas of
// every CRD in it, and records in found the embedded paths it met.
func trim(data []byte, found map[string]bool) ([]byte, error) {
	var docs []*yaml.Node
	var keys []*yaml.Node // the description keys to delete
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		doc := &yaml.Node{}
		err := dec.Decode(doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc)
		if len(doc.Content) == 0 || scalar(field(doc.Content[0], "kind")) != "CustomResourceDefinition" {
			continue
		}
		versions := field(field(doc.Content[0], "spec"), "versions")
		if versions == nil {
			continue
		}
		kind := scalar(field(field(field(doc.Content[0], "spec"), "names"), "kind"))
		for _, version := range versions.Content {
			root := field(field(version, "schema"), "openAPIV3Schema")
			for _, path := range embedded {
				schema := schemaAt(root, path)
				if schema != nil {
					found[path] = true
					keys = collect(schema, false, keys)
				}
			}
			if kind == optionalTemplate {
				if key := keyOf(schemaAt(root, "spec.template.spec"), "required"); key != nil {
					found[optionalTemplate+" spec.template.spec.required"] = true
					keys = append(keys, key)
				}
			}
		}
	}
	if len(keys) == 0 {
		return data, nil
	}

	out, err := deleteLines(data, keys)
	if err != nil {
		return nil, err
	}
	// The text edit must be exactly the removal of those keys.
	for _, doc := range docs {
		removeKeys(doc, keys)
	}
	if err := sameDocuments(docs, out); err != nil {
		return nil, fmt.Errorf("deleting description lines did not give the expected YAML: %w", err)
	}
	return out, nil
}

// collect appends the description keys of the schema s (its own only if
// own) and of every schema below it. It follows the keywords that hold
// schemas, so that a default value or a field that happens to be named
// description is left alone.
func collect(s *yaml.Node, own bool, keys []*yaml.Node) []*yaml.Node {
	if s == nil || s.Kind != yaml.MappingNode {
		return keys
	}
	for i := 0; i+1 < len(s.Content); i += 2 {
		key, value := s.Content[i], s.Content[i+1]
		switch key.Value {
		case "description":
			if own {
				keys = append(keys, key)
			}
		case "properties", "patternProperties":
			if value.Kind == yaml.MappingNode {
				for j := 1; j < len(value.Content); j += 2 {
					keys = collect(value.Content[j], true, keys)
				}
			}
		case "items", "additionalProperties", "not":
			keys = collect(value, true, keys)
		case "allOf", "anyOf", "oneOf":
			for _, sub := range value.Content {
				keys = collect(sub, true, keys)
			}
		}
	}
	return keys
}

// deleteLines deletes, for each key, the line of the key and the lines of
// its value: those after it indented deeper than the key, and the items of
// a block sequence, which controller-gen writes at the key's indentation.
// controller-gen writes block mappings, one key a line; anything else is
// refused rather than guessed at.
func deleteLines(data []byte, keys []*yaml.Node) ([]byte, error) {
	lines := strings.SplitAfter(string(data), "\n")
	drop := make([]bool, len(lines))
	for _, key := range keys {
		first := key.Line - 1
		indent := key.Column - 1
		if first < 0 || first >= len(lines) || len(lines[first]) < indent ||
			strings.TrimLeft(lines[first][:indent], " ") != "" ||
			!strings.HasPrefix(lines[first][indent:], key.Value+":") {
			return nil, fmt.Errorf("line %d: %s is not a key of a block mapping on a line of its own", key.Line, key.Value)
		}
		last := first
		for i := first + 1; i < len(lines); i++ {
			text := strings.TrimRight(lines[i], "\r\n")
			if strings.TrimSpace(text) == "" {
				continue
			}
			if depth := len(text) - len(strings.TrimLeft(text, " ")); depth < indent ||
				depth == indent && !strings.HasPrefix(text[depth:], "- ") {
				break
			}
			last = i
		}
		for i := first; i <= last; i++ {
			drop[i] = true
		}
	}
	var out strings.Builder
	out.Grow(len(data))
	for i, line := range lines {
		if !drop[i] {
			out.WriteString(line)
		}
	}
	return []byte(out.String()), nil
}

// removeKeys removes the given keys, and their values, from the mappings
// of the node tree n.
func removeKeys(n *yaml.Node, keys []*yaml.Node) {
	remove := make(map[*yaml.Node]bool, len(keys))
	for _, key := range keys {
		remove[key] = true
	}
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			kept := n.Content[:0]
			for i := 0; i+1 < len(n.Content); i += 2 {
				if !remove[n.Content[i]] {
					kept = append(kept, n.Content[i], n.Content[i+1])
				}
			}
			n.Content = kept
		}
		for _, child := range n.Content {
			walk(child)
		}
	}
	walk(n)
}

// sameDocuments reports whether data holds the documents docs, value for
// value.
func sameDocuments(docs []*yaml.Node, data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for i, doc := range docs {
		var want, got any
		if err := doc.Decode(&want); err != nil {
			return err
		}
		if err := dec.Decode(&got); err != nil {
			return fmt.Errorf("document %d: %w", i+1, err)
		}
		if !reflect.DeepEqual(want, got) {
			return fmt.Errorf("document %d differs", i+1)
		}
	}
	var extra any
	switch err := dec.Decode(&extra); {
	case err == nil:
		return errors.New("more documents than before")
	case !errors.Is(err, io.EOF):
		return err
	}
	return nil
}

// schemaAt is the schema of the field at path (dotted) below root, or nil.
func schemaAt(root *yaml.Node, path string) *yaml.Node {
	schema := root
	for _, name := range strings.Split(path, ".") {
		schema = field(field(schema, "properties"), name)
	}
	return schema
}

// keyOf returns the key node of key in the mapping m, or nil.
func keyOf(m *yaml.Node, key string) *yaml.Node {
	if i := indexOf(m, key); i >= 0 {
		return m.Content[i]
	}
	return nil
}

// field returns the value of key in the mapping m, or nil.
func field(m *yaml.Node, key string) *yaml.Node {
	if i := indexOf(m, key); i >= 0 {
		return m.Content[i+1]
	}
	return nil
}

// indexOf is the index of key's key node in the mapping m, -1 when absent.
func indexOf(m *yaml.Node, key string) int {
	if m == nil || m.Kind != yaml.MappingNode {
		return -1
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i
		}
	}
	return -1
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}
