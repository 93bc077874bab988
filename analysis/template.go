package analysis

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"
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
	// Window is the span a measurement covers: the canary so far.
	Window time.Duration

	// baseline marks vars from Baseline, whose canary nodes are unknown.
	baseline bool
}

// Baseline returns the vars with the stable pods and replica set in place of
// the canary ones, so that the same query template renders the baseline
// query. The nodes of the stable pods are not known: a template that uses
// .CanaryNodeRegex fails to render for the baseline rather than silently
// selecting the wrong series.
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

// templateData is what a query template is executed with. Every string is
// already escaped for a PromQL double-quoted string literal. A struct (not a
// map) makes an unknown name a rendering error, and lets CanaryNodeRegex fail
// for a baseline.
type templateData struct {
	Namespace        string
	Name             string
	CanaryReplicaSet string
	StableReplicaSet string
	CanaryPodRegex   string
	StablePodRegex   string
	Interval         string
	Window           string

	canaryNodeRegex string
	nodesUnknown    bool
}

// CanaryNodeRegex is a method so that a baseline rendering can refuse it.
func (d templateData) CanaryNodeRegex() (string, error) {
	if d.nodesUnknown {
		return "", errNodesUnknown
	}
	return d.canaryNodeRegex, nil
}

// Render executes a query template (Go text/template) with .Namespace,
// .Name, .CanaryReplicaSet, .StableReplicaSet, .CanaryPodRegex,
// .StablePodRegex, .CanaryNodeRegex, .Interval and .Window. Every value is
// escaped for use inside a PromQL double-quoted string, so no name can change
// the meaning of the query. The regexes are alternations of the sorted,
// regexp-quoted names (PromQL anchors them); an empty list renders an empty
// regex. Durations are PromQL durations in whole seconds, at least 1s.
// Referring to any other name is an error.
func Render(query string, vars Vars) (string, error) {
	tmpl, err := template.New("query").Parse(query)
	if err != nil {
		return "", fmt.Errorf("parse query template: %w", err)
	}
	var out strings.Builder
	if err := tmpl.Execute(&out, newTemplateData(vars)); err != nil {
		return "", fmt.Errorf("render query template: %w", err)
	}
	return out.String(), nil
}

func newTemplateData(v Vars) templateData {
	t := v.Target
	return templateData{
		Namespace:        escapeString(t.Namespace),
		Name:             escapeString(t.Name),
		CanaryReplicaSet: escapeString(t.CanaryReplicaSet),
		StableReplicaSet: escapeString(t.StableReplicaSet),
		CanaryPodRegex:   escapeString(alternation(t.CanaryPods)),
		StablePodRegex:   escapeString(alternation(t.StablePods)),
		Interval:         promDuration(v.Interval),
		Window:           promDuration(v.Window),
		canaryNodeRegex:  escapeString(alternation(t.CanaryNodes)),
		nodesUnknown:     v.baseline,
	}
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
	d = d.Round(time.Second)
	if d < time.Second {
		d = time.Second
	}
	return model.Duration(d).String()
}
