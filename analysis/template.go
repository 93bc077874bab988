package analysis

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
	"time"

	"github.com/prometheus/common/model"
)

// Target is who a measurement is about.
type Target struct {
	// Namespace and Name identify the ExtendedDaemonSet.
	Namespace, Name string
	// CanaryReplicaSet and StableReplicaSet name the replica sets compared.
	CanaryReplicaSet, StableReplicaSet string
	// CanaryPods and StablePods are pod names.
	CanaryPods, StablePods []string
	// CanaryNodes are the names of the nodes that run the canary.
	CanaryNodes []string
}

// Vars are the values a query template sees.
type Vars struct {
	Target Target
	// Interval is the time between two measurements of a metric.
	Interval time.Duration
	// Window is the span a measurement covers: the canary so far, at
	// least one interval and, beyond that, at most MaxWindow.
	Window time.Duration

	// baseline marks vars from Baseline, whose canary nodes are unknown.
	baseline bool
}

// Baseline returns the vars with the stable pods and replica set in place of
// the canary ones, so that the same query template renders the baseline
// query. The nodes of the stable pods are not known: a template that uses
// .CanaryNodeRegex fails to render for the baseline rather than silently
// selecting the wrong series, and CheckMetrics refuses such a metric.
func (v Vars) Baseline() Vars {
	b := v
	b.Target.CanaryPods = v.Target.StablePods
	b.Target.CanaryReplicaSet = v.Target.StableReplicaSet
	b.Target.CanaryNodes = nil
	b.baseline = true
	return b
}

// errNodesUnknown is returned when a baseline query asks for canary nodes.
var errNodesUnknown = errors.New("the nodes of the stable pods are not known: a query compared with a baseline cannot use .CanaryNodeRegex")

// MaxRenderedQuery bounds a rendered query, in bytes. A regex of 5,000 pod
// names of 63 characters (the longest a pod name gets) is about 320 KiB and
// a query may use one a few times, the errorRate preset four; 2 MiB leaves
// room for that, and even URL-encoded (three bytes a byte at worst) such a
// query stays under the 10 MB that Go's HTTP server, and so Prometheus,
// reads of a form.
const MaxRenderedQuery = 2 << 20

// queryFields are the fields a query template may use, in the order the
// documentation lists them.
var queryFields = []string{
	"Namespace", "Name", "CanaryReplicaSet", "StableReplicaSet",
	"CanaryPodRegex", "StablePodRegex", "CanaryNodeRegex", "Interval", "Window",
}

// queryTemplate is a parsed and checked query template: the text between
// actions and the fields or string constants of the actions, in order.
type queryTemplate struct {
	parts []templatePart
	// usesNodes is whether the template asks for .CanaryNodeRegex.
	usesNodes bool
}

// templatePart is literal text, or a field to look up when field is set.
type templatePart struct {
	text, field string
}

// Render renders a query template with .Namespace, .Name,
// .CanaryReplicaSet, .StableReplicaSet, .CanaryPodRegex, .StablePodRegex,
// .CanaryNodeRegex, .Interval and .Window. The syntax is Go text/template's,
// but an action may only be one of these fields or a string constant (the
// presets write "{{" as {{"{{"}}); comments and trim markers are allowed.
// Anything else, a function, a variable, range, if, with, template or
// define, is refused with a *SpecError, as ValidateQuery does: a template
// renders in time and memory proportional to its length and the fields'
// values, whoever wrote it. Every value is escaped for use inside a PromQL
// double-quoted string, so no name can change the meaning of the query. The
// regexes are alternations of the sorted, regexp-quoted names (PromQL
// anchors them); an empty list renders an empty regex. Durations are PromQL
// durations in whole seconds, at least 1s; .Window is Vars.Window, which
// Analyzer.Step makes the canary so far, at least one interval and, beyond
// that, at most MaxWindow. A query longer than MaxRenderedQuery bytes is an
// error.
func Render(query string, vars Vars) (string, error) {
	tmpl, err := parseQuery(query)
	if err != nil {
		return "", err
	}
	return tmpl.render(vars)
}

// ValidateQuery checks a query template without rendering it: the error,
// always a *SpecError, is the one Render would return for any pods.
func ValidateQuery(query string) error {
	_, err := parseQuery(query)
	return err
}

// parseQuery parses a query template and checks that every action is a
// known field or a string constant.
func parseQuery(query string) (*queryTemplate, error) {
	tmpl, err := template.New("query").Parse(query)
	if err != nil {
		return nil, &SpecError{Err: fmt.Errorf("parse query template: %w", err)}
	}
	// Parse keeps {{define}} and {{block}} bodies as templates of their own.
	for _, t := range tmpl.Templates() {
		if t.Name() != tmpl.Name() {
			return nil, refused("{{define ...}} or {{block ...}}")
		}
	}
	out := &queryTemplate{}
	if tmpl.Tree == nil {
		return out, nil
	}
	for _, node := range tmpl.Root.Nodes {
		if err := out.add(node); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (q *queryTemplate) add(node parse.Node) error {
	switch n := node.(type) {
	case *parse.TextNode:
		q.parts = append(q.parts, templatePart{text: string(n.Text)})
		return nil
	case *parse.CommentNode:
		return nil
	case *parse.ActionNode:
		return q.addAction(n)
	case *parse.RangeNode:
		return refused("{{range ...}}")
	case *parse.IfNode:
		return refused("{{if ...}}")
	case *parse.WithNode:
		return refused("{{with ...}}")
	case *parse.TemplateNode:
		return refused("{{template ...}}")
	}
	return refused(Truncate(node.String(), maxActionQuoted))
}

// maxActionQuoted bounds an action quoted in an error.
const maxActionQuoted = 80

// addAction accepts {{.Field}} and {{"constant"}}: one command of one
// argument, with no variable declared.
func (q *queryTemplate) addAction(n *parse.ActionNode) error {
	action := Truncate(n.String(), maxActionQuoted)
	pipe := n.Pipe
	if len(pipe.Decl) > 0 || len(pipe.Cmds) != 1 || len(pipe.Cmds[0].Args) != 1 {
		return refused(action)
	}
	switch arg := pipe.Cmds[0].Args[0].(type) {
	case *parse.StringNode:
		q.parts = append(q.parts, templatePart{text: arg.Text})
		return nil
	case *parse.FieldNode:
		if len(arg.Ident) != 1 {
			return refused(action)
		}
		name := arg.Ident[0]
		if !slices.Contains(queryFields, name) {
			return &SpecError{Err: fmt.Errorf("query template: %s: unknown field .%s: %s", action, name, allowedActions())}
		}
		q.usesNodes = q.usesNodes || name == "CanaryNodeRegex"
		q.parts = append(q.parts, templatePart{field: name})
		return nil
	}
	return refused(action)
}

func refused(action string) error {
	return &SpecError{Err: fmt.Errorf("query template: %s is not allowed: %s", action, allowedActions())}
}

func allowedActions() string {
	fields := make([]string, len(queryFields))
	for i, f := range queryFields {
		fields[i] = "." + f
	}
	return "a query template may only use the fields " + strings.Join(fields[:len(fields)-1], ", ") +
		" and " + fields[len(fields)-1] + `, each alone in its action as in {{.Namespace}}, and string constants such as {{"{{"}}`
}

// render writes the template with the values of vars, refusing a query
// over MaxRenderedQuery before building it.
func (q *queryTemplate) render(vars Vars) (string, error) {
	values := map[string]string{}
	size := 0
	for _, p := range q.parts {
		if p.field == "" {
			size += len(p.text)
			continue
		}
		v, ok := values[p.field]
		if !ok {
			var err error
			if v, err = fieldValue(p.field, vars); err != nil {
				return "", err
			}
			values[p.field] = v
		}
		size += len(v)
	}
	if size > MaxRenderedQuery {
		return "", fmt.Errorf("query template: the rendered query would be %d bytes, over the limit of %d bytes: select fewer pods, or use a pod regex fewer times", size, MaxRenderedQuery)
	}
	var out strings.Builder
	out.Grow(size)
	for _, p := range q.parts {
		if p.field == "" {
			out.WriteString(p.text)
		} else {
			out.WriteString(values[p.field])
		}
	}
	return out.String(), nil
}

// fieldValue is the value of a template field, escaped for the inside of a
// PromQL double-quoted string.
func fieldValue(field string, v Vars) (string, error) {
	t := v.Target
	switch field {
	case "Namespace":
		return escapeString(t.Namespace), nil
	case "Name":
		return escapeString(t.Name), nil
	case "CanaryReplicaSet":
		return escapeString(t.CanaryReplicaSet), nil
	case "StableReplicaSet":
		return escapeString(t.StableReplicaSet), nil
	case "CanaryPodRegex":
		return escapeString(alternation(t.CanaryPods)), nil
	case "StablePodRegex":
		return escapeString(alternation(t.StablePods)), nil
	case "CanaryNodeRegex":
		if v.baseline {
			return "", &SpecError{Err: errNodesUnknown}
		}
		return escapeString(alternation(t.CanaryNodes)), nil
	case "Interval":
		return promDuration(v.Interval), nil
	case "Window":
		return promDuration(v.Window), nil
	}
	return "", &SpecError{Err: fmt.Errorf("query template: unknown field .%s: %s", field, allowedActions())}
}

// escapeString escapes s for the inside of a PromQL double-quoted string.
// PromQL unquotes string literals with Go's rules, so Go's quoting is exact:
// it escapes the quote, the backslash, newlines and every other control or
// non-printable character.
func escapeString(s string) string {
	quoted := strconv.Quote(s)
	return quoted[1 : len(quoted)-1]
}

// alternation is a regex matching exactly one of names. Sorting keeps the
// rendered query stable across reconciles whatever order the cache lists pods.
func alternation(names []string) string {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	for i, n := range sorted {
		sorted[i] = regexp.QuoteMeta(n)
	}
	return strings.Join(sorted, "|")
}

// promDuration renders d as a PromQL duration. Range selectors and rate
// windows below a second make no sense for scraped data.
func promDuration(d time.Duration) string {
	// Round saturates at the largest Duration, which is no whole second.
	d = d.Round(time.Second).Truncate(time.Second)
	if d < time.Second {
		d = time.Second
	}
	return model.Duration(d).String()
}
