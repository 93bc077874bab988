package migrate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// document is one object of the input, as the generic maps JSON decodes
// to (numbers kept as json.Number, so that they print as they were written).
type document struct {
	// position says where the object is in the input: "document 2", or
	// "document 2, item 3" inside a List.
	position string
	object   map[string]any
}

// readDocuments splits the YAML or JSON stream in into its objects; the
// items of a List (what `kubectl get -o yaml` prints for several objects)
// count as objects of their own. Documents that hold nothing, such as a
// leading "---" or only comments, are skipped and not counted.
func readDocuments(in io.Reader) ([]document, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(in))
	var docs []document
	for n := 1; ; {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: reading: %w", n, err)
		}
		value, err := decodeYAML(raw)
		if err != nil {
			return nil, fmt.Errorf("document %d: not valid YAML: %w", n, err)
		}
		if value == nil {
			continue
		}
		position := fmt.Sprintf("document %d", n)
		n++
		object, ok := value.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: not a Kubernetes object: want a mapping with apiVersion and kind, got %s", position, describe(value))
		}
		items, err := listItems(position, object)
		if err != nil {
			return nil, err
		}
		if items == nil {
			items = []document{{position: position, object: object}}
		}
		docs = append(docs, items...)
	}
	if len(docs) == 0 {
		return nil, errors.New("no object to migrate: the input is empty")
	}
	return docs, nil
}

// decodeYAML decodes one document, refusing duplicate keys: of two values
// for one field, the API server would keep one, and which is not obvious.
func decodeYAML(raw []byte) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	js, err := yaml.YAMLToJSONStrict(raw)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var value any
	if err := dec.Decode(&value); err != nil {
		return nil, err
	}
	return value, nil
}

// listItems returns the items of a List, or nil when object is not one.
func listItems(position string, object map[string]any) ([]document, error) {
	kind, _ := object["kind"].(string)
	if !strings.HasSuffix(kind, "List") {
		return nil, nil
	}
	raw, ok := object["items"].([]any)
	if !ok {
		return nil, fmt.Errorf("%s: a %s without an items list", position, kind)
	}
	items := make([]document, 0, len(raw))
	for i, item := range raw {
		itemPosition := fmt.Sprintf("%s, item %d", position, i+1)
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: not a Kubernetes object: want a mapping with apiVersion and kind, got %s", itemPosition, describe(item))
		}
		items = append(items, document{position: itemPosition, object: m})
	}
	return items, nil
}

// describe names the JSON type of v, for errors about a value of the
// wrong shape.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return fmt.Sprintf("the string %q", v)
	case json.Number:
		return "the number " + v.String()
	case bool:
		return fmt.Sprintf("the boolean %t", v)
	}
	return fmt.Sprintf("a %T", v)
}
