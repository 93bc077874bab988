package migrate

import (
	"slices"
	"strings"
)

// fate is what becomes of one field of the source object. The zero fate
// copies the value unchanged: its meaning is the same here.
type fate struct {
	// fields maps an object field by field.
	fields shape
	// dropped says why the field has no meaning here; it is left out with a
	// warning that says so.
	dropped string
	// quiet leaves the field out without a word: the API server or a
	// controller wrote it, and writes its own for the new object.
	quiet bool
}

// shape is the fate of every field of an object that the source kind
// knows; any other field is unknown, and left out with a warning.
type shape map[string]fate

var (
	kept      = fate{}
	serverSet = fate{quiet: true}
)

func dropped(why string) fate { return fate{dropped: why} }

// reshape maps the fields of src, the object at path, by s. Null fields
// are unset fields, and left out.
func (m *migration) reshape(path string, src map[string]any, s shape) map[string]any {
	out := map[string]any{}
	for _, key := range sortedKeys(src) {
		value := src[key]
		field := joinPath(path, key)
		f, known := s[key]
		switch {
		case value == nil, f.quiet:
		case !known:
			m.warn(field, "unknown field, left out")
		case f.dropped != "":
			m.warn(field, "left out: "+f.dropped)
		case f.fields != nil:
			if obj := m.object(field, value); obj != nil {
				out[key] = m.reshape(field, obj, f.fields)
			}
		default:
			out[key] = value
		}
	}
	return out
}

// object is value as an object, or nil, with an error, when it is
// something else; a null value is an empty object.
func (m *migration) object(path string, value any) map[string]any {
	switch v := value.(type) {
	case nil:
		return map[string]any{}
	case map[string]any:
		return v
	}
	m.fail("%s: want an object, got %s", path, describe(value))
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func joinPath(parts ...string) string {
	var nonEmpty []string
	for _, p := range parts {
		if p != "" {
			nonEmpty = append(nonEmpty, p)
		}
	}
	return strings.Join(nonEmpty, ".")
}

// setPath sets the value at the dotted path of obj, creating the objects on
// the way.
func setPath(obj map[string]any, value any, path ...string) {
	for _, key := range path[:len(path)-1] {
		next, ok := obj[key].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[key] = next
		}
		obj = next
	}
	obj[path[len(path)-1]] = value
}

// getPath is the value at path in obj, or nil.
func getPath(obj map[string]any, path ...string) any {
	var value any = obj
	for _, key := range path {
		m, ok := value.(map[string]any)
		if !ok {
			return nil
		}
		value = m[key]
	}
	return value
}
