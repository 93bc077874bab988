package monitoring

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"

	promharness "github.com/extendeddaemonset/extendeddaemonset/test/harness/prometheus"
)

// expression is one PromQL query of the rules or the dashboard, as written
// (Grafana variables included).
type expression struct {
	where string
	query string
	// panel is set for the queries of dashboard panels, which show the
	// ExtendedDaemonSets picked in the variables.
	panel bool
}

// ruleGroup is a rule group of a PrometheusRule, as promtool reads it too.
type ruleGroup struct {
	Name  string `json:"name"`
	Rules []rule `json:"rules"`
}

type rule struct {
	Alert       string            `json:"alert,omitempty"`
	Record      string            `json:"record,omitempty"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

func (r rule) name() string { return r.Alert + r.Record }

// ruleGroups renders config/prometheus and returns the groups of its
// PrometheusRule.
func ruleGroups(t *testing.T) []ruleGroup {
	t.Helper()
	var spec struct {
		Groups []ruleGroup `json:"groups"`
	}
	fromUnstructured(t, only(t, renderKinds(t, monitoringDir), "PrometheusRule").Object["spec"], &spec)
	if len(spec.Groups) == 0 {
		t.Fatal("the PrometheusRule has no rule group")
	}
	return spec.Groups
}

// dashboard is the part of a Grafana dashboard that holds queries.
type dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
}

type panel struct {
	Title      string          `json:"title"`
	Type       string          `json:"type"`
	Datasource json.RawMessage `json:"datasource"`
	Targets    []struct {
		RefID      string          `json:"refId"`
		Expr       string          `json:"expr"`
		Datasource json.RawMessage `json:"datasource"`
	} `json:"targets"`
	// Panels of a collapsed row.
	Panels []panel `json:"panels"`
}

type variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"`
	Datasource json.RawMessage `json:"datasource"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	var d dashboard
	if err := json.Unmarshal(readFile(t, repoPath(monitoringDir+"/"+dashboardFile)), &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// allPanels flattens rows.
func allPanels(panels []panel) []panel {
	var out []panel
	for _, p := range panels {
		out = append(out, p)
		out = append(out, allPanels(p.Panels)...)
	}
	return out
}

// labelValuesCall is Grafana's label_values(<selector>, <label>) variable
// query, which is not PromQL itself.
var labelValuesCall = regexp.MustCompile(`^\s*label_values\((.+),\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$`)

// variableQuery turns a Prometheus query variable into the PromQL Grafana
// evaluates for it.
func variableQuery(v variable) (string, error) {
	var q string
	if err := json.Unmarshal(v.Query, &q); err != nil {
		var editor struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &editor); err != nil {
			return "", fmt.Errorf("variable %s: query is neither a string nor an object with a query: %s", v.Name, v.Query)
		}
		q = editor.Query
	}
	m := labelValuesCall.FindStringSubmatch(q)
	if m == nil {
		return "", fmt.Errorf("variable %s: %q is not label_values(<selector>, <label>)", v.Name, q)
	}
	return "group by (" + m[2] + ") (" + m[1] + ")", nil
}

// allExpressions returns every query of the rules and the dashboard.
func allExpressions(t *testing.T) []expression {
	t.Helper()
	var out []expression
	for _, g := range ruleGroups(t) {
		for _, r := range g.Rules {
			out = append(out, expression{where: "rule " + r.name(), query: r.Expr})
		}
	}
	d := loadDashboard(t)
	for _, p := range allPanels(d.Panels) {
		for _, target := range p.Targets {
			out = append(out, expression{where: fmt.Sprintf("panel %q query %s", p.Title, target.RefID), query: target.Expr, panel: true})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, err := variableQuery(v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, expression{where: "variable " + v.Name, query: q})
	}
	return out
}

// sampleValues stand in for Grafana's variables; the dashboard's own
// variables take values of the kind their queries return.
var sampleValues = map[string]string{
	"datasource":      "prometheus",
	"namespace":       "agents",
	"name":            "log-shipper",
	"__rate_interval": "1m",
	"__interval":      "15s",
	"__range":         "1h",
}

// grafanaVariable matches $var and ${var} or ${var:format}.
var grafanaVariable = regexp.MustCompile(`\$\{([a-zA-Z_][a-zA-Z0-9_]*)(?::[a-z]+)?\}|\$([a-zA-Z_][a-zA-Z0-9_]*)`)

// substitute replaces Grafana variables by sample values; a variable with
// no sample value is an error, so that a typo cannot pass as valid PromQL.
func substitute(query string) (string, error) {
	var unknown []string
	out := grafanaVariable.ReplaceAllStringFunc(query, func(ref string) string {
		m := grafanaVariable.FindStringSubmatch(ref)
		name := m[1] + m[2]
		value, ok := sampleValues[name]
		if !ok {
			unknown = append(unknown, ref)
		}
		return value
	})
	if len(unknown) > 0 {
		return "", fmt.Errorf("unknown Grafana variables %v", unknown)
	}
	return out, nil
}

// selector is a vector or range selector of a query, as Prometheus parsed it.
type selector struct {
	Name     string    `json:"name"`
	Matchers []matcher `json:"matchers"`
}

type matcher struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Type  string `json:"type"`
}

// metricName is the name a selector selects, from its name or an equality
// matcher on __name__; empty when no single name is fixed.
func (s selector) metricName() string {
	if s.Name != "" {
		return s.Name
	}
	for _, m := range s.Matchers {
		if m.Name == "__name__" && m.Type == "=" {
			return m.Value
		}
	}
	return ""
}

// selectorsOf parses query with Prometheus's own parser, through the
// server's parse_query API, and returns its selectors. A query that does
// not parse is an error carrying Prometheus's message.
func selectorsOf(ctx context.Context, srv *promharness.Server, query string) ([]selector, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/api/v1/parse_query",
		strings.NewReader(url.Values{"query": {query}}.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var answer struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return nil, fmt.Errorf("parse_query answered %s: %s", resp.Status, body)
	}
	if answer.Status != "success" {
		return nil, fmt.Errorf("parse_query: %s", answer.Error)
	}
	var tree any
	if err := json.Unmarshal(answer.Data, &tree); err != nil {
		return nil, err
	}
	var out []selector
	if err := collectSelectors(tree, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// collectSelectors walks the syntax tree Prometheus returns.
func collectSelectors(node any, out *[]selector) error {
	switch n := node.(type) {
	case map[string]any:
		if typ, _ := n["type"].(string); typ == "vectorSelector" || typ == "matrixSelector" {
			var s selector
			data, err := json.Marshal(n)
			if err != nil {
				return err
			}
			if err := json.Unmarshal(data, &s); err != nil {
				return err
			}
			*out = append(*out, s)
			return nil
		}
		for _, child := range n {
			if err := collectSelectors(child, out); err != nil {
				return err
			}
		}
	case []any:
		for _, child := range n {
			if err := collectSelectors(child, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// Every query of the alerts and the dashboard parses and evaluates on a real
// Prometheus, once Grafana's variables have values, and every selector names
// its metric and the controller's job where it selects by job.
func TestExpressionsParseAndEvaluate(t *testing.T) {
	ctx := t.Context()
	srv := startPrometheus(t)
	api, err := srv.API()
	if err != nil {
		t.Fatal(err)
	}
	exprs := allExpressions(t)
	if len(exprs) < 20 {
		t.Fatalf("found only %d expressions in the rules and the dashboard", len(exprs))
	}
	for _, e := range exprs {
		q, err := substitute(e.query)
		if err != nil {
			t.Errorf("%s: %v", e.where, err)
			continue
		}
		queryCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, warnings, _, err := api.Query(queryCtx, q, time.Now())
		cancel()
		if err != nil {
			var apiErr *promv1.Error
			if errors.As(err, &apiErr) && apiErr.Type == promv1.ErrBadData {
				t.Errorf("%s does not parse: %v\n%s", e.where, err, q)
			} else {
				t.Errorf("%s does not evaluate: %v\n%s", e.where, err, q)
			}
			continue
		}
		if len(warnings) > 0 {
			t.Errorf("%s: Prometheus warns %v\n%s", e.where, warnings, q)
		}
		selectors, err := selectorsOf(ctx, srv, q)
		if err != nil {
			t.Errorf("%s: %v", e.where, err)
			continue
		}
		for _, s := range selectors {
			if s.metricName() == "" {
				t.Errorf("%s: a selector names no single metric: %+v", e.where, s)
			}
			for _, m := range s.Matchers {
				if m.Name == "job" && (m.Type != "=" || m.Value != controllerJob) {
					t.Errorf("%s: selects job%s%q, the ServiceMonitor's job is %q", e.where, m.Type, m.Value, controllerJob)
				}
			}
			if e.panel && strings.HasPrefix(s.metricName(), "extendeddaemonset_") {
				for _, label := range []string{"namespace", "name"} {
					want := matcher{Name: label, Type: "=~", Value: sampleValues[label]}
					if !slices.Contains(s.Matchers, want) {
						t.Errorf("%s: %s is not filtered by %s=~\"$%s\"", e.where, s.metricName(), label, label)
					}
				}
			}
		}
	}
}

// Variables are substituted, unknown ones refused.
func TestSubstitute(t *testing.T) {
	got, err := substitute(`rate(x{namespace=~"$namespace", name=~"${name}"}[$__rate_interval])`)
	if want := `rate(x{namespace=~"agents", name=~"log-shipper"}[1m])`; err != nil || got != want {
		t.Errorf("substitute = %q, %v; want %q", got, err, want)
	}
	if _, err := substitute(`x{pod=~"$pod"}`); err == nil {
		t.Error("an unknown variable was accepted")
	}
}
