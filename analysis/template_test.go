package analysis

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRenderFields(t *testing.T) {
	vars := testVars()
	cases := map[string]string{
		"{{.Namespace}}":        "agents",
		"{{.Name}}":             "node-agent",
		"{{.CanaryReplicaSet}}": "node-agent-canary",
		"{{.StableReplicaSet}}": "node-agent-stable",
		"{{.CanaryPodRegex}}":   "canary-a|canary-b",
		"{{.StablePodRegex}}":   "stable-a|stable-b|stable-c",
		"{{.CanaryNodeRegex}}":  "node-1|node-2",
		"{{.Interval}}":         "1m",
		"{{.Window}}":           "10m",
		"{{ .Namespace }}/x":    "agents/x",
	}
	for tmpl, want := range cases {
		got, err := Render(tmpl, vars)
		if err != nil || got != want {
			t.Errorf("Render(%q) = %q, %v; want %q", tmpl, got, err, want)
		}
	}
}

func TestRenderDurationsAreWholeSecondsOfAtLeastOne(t *testing.T) {
	cases := []struct {
		in   time.Duration
		want string
	}{
		{0, "1s"},
		{200 * time.Millisecond, "1s"},
		{1500 * time.Millisecond, "2s"},
		{90 * time.Second, "1m30s"},
		{2 * time.Hour, "2h"},
		{25*time.Hour + 400*time.Millisecond, "1d1h"},
	}
	for _, c := range cases {
		vars := testVars()
		vars.Window = c.in
		got, err := Render("{{.Window}}", vars)
		if err != nil || got != c.want {
			t.Errorf("window %s rendered %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestRenderRejectsUnknownNamesAndBadTemplates(t *testing.T) {
	for _, tmpl := range []string{"{{.Namspace}}", "{{.Namespace", "{{template \"x\"}}"} {
		if got, err := Render(tmpl, testVars()); err == nil {
			t.Errorf("Render(%q) = %q, want an error", tmpl, got)
		}
	}
}

func TestBaselineSwapsCanaryForStable(t *testing.T) {
	b := testVars().Baseline()
	got, err := Render(`{{.CanaryReplicaSet}} {{.CanaryPodRegex}} {{.StablePodRegex}}`, b)
	if want := "node-agent-stable stable-a|stable-b|stable-c stable-a|stable-b|stable-c"; err != nil || got != want {
		t.Errorf("baseline rendered %q, %v; want %q", got, err, want)
	}
	if _, err := Render(`up{node=~"{{.CanaryNodeRegex}}"}`, b); err == nil || !strings.Contains(err.Error(), "CanaryNodeRegex") {
		t.Errorf("a baseline query using the canary nodes must fail to render, got %v", err)
	}
}

// hostileNames are pod names that would change a query's meaning if they
// were pasted into it unescaped.
var hostileNames = []string{
	`a"b`, `c}d`, `e{f`, `g|h`, `.*`, `(x`, `back\slash`, "new\nline", `q'uote`, "tab\tx",
	"nul\x00x", "sep\u2028x", `end\`, `"}) or vector(1) #`, "`raw`", `$[^`, "ünï",
}

func TestRenderEscapesHostileNames(t *testing.T) {
	const tmpl = `sum(rate(x{namespace="{{.Namespace}}",pod=~"{{.CanaryPodRegex}}"}[{{.Window}}])) / on() {{.Interval}}`
	plain := testVars()
	wantSkeleton, _ := lexPromQL(t, mustRender(t, tmpl, plain))

	for _, name := range hostileNames {
		vars := testVars()
		vars.Target.Namespace = name
		vars.Target.CanaryPods = []string{name, "ok-pod"}
		query := mustRender(t, tmpl, vars)

		skeleton, literals := lexPromQL(t, query)
		if skeleton != wantSkeleton {
			t.Errorf("name %q changed the query's structure:\n got %s\nwant %s", name, skeleton, wantSkeleton)
			continue
		}
		if literals[0] != name {
			t.Errorf("namespace %q came back as %q", name, literals[0])
		}
		wantRegex := alternation([]string{"ok-pod", name})
		if literals[1] != wantRegex {
			t.Errorf("pod regex for %q came back as %q, want %q", name, literals[1], wantRegex)
		}
		// PromQL anchors the regex: it must match exactly the listed pods.
		re := regexp.MustCompile("^(?:" + literals[1] + ")$")
		for _, pod := range vars.Target.CanaryPods {
			if !re.MatchString(pod) {
				t.Errorf("regex %q does not match pod %q", literals[1], pod)
			}
		}
		for _, other := range []string{"", "other", name + "x", "ok-pod|" + name} {
			if re.MatchString(other) {
				t.Errorf("regex %q for %q also matches %q", literals[1], name, other)
			}
		}
	}
}

func TestAlternationIsSortedAndDeduplicated(t *testing.T) {
	if got := alternation([]string{"b.1", "a", "b.1"}); got != `a|b\.1` {
		t.Errorf("alternation = %q", got)
	}
	if got := alternation(nil); got != "" {
		t.Errorf("empty alternation = %q", got)
	}
}

func mustRender(t *testing.T, tmpl string, vars Vars) string {
	t.Helper()
	q, err := Render(tmpl, vars)
	if err != nil {
		t.Fatalf("Render(%q): %v", tmpl, err)
	}
	return q
}

// lexPromQL splits a query into its skeleton, where every string literal is
// replaced by "S", and the unquoted literals. It fails the test on an
// unterminated or undecodable string and on unbalanced brackets outside
// strings, which is all it takes to tell whether a value escaped its
// literal.
func lexPromQL(t *testing.T, q string) (string, []string) {
	t.Helper()
	var skeleton strings.Builder
	var literals []string
	var open []rune
	closers := map[rune]rune{')': '(', ']': '[', '}': '{'}
	runes := []rune(q)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		switch r {
		case '"', '\'', '`':
			end := i + 1
			for ; end < len(runes) && runes[end] != r; end++ {
				if runes[end] == '\\' && r != '`' {
					end++
				}
				if end < len(runes) && runes[end] == '\n' && r != '`' {
					t.Fatalf("newline inside a string literal in %q", q)
				}
			}
			if end >= len(runes) {
				t.Fatalf("unterminated string literal in %q", q)
			}
			raw := string(runes[i : end+1])
			if r == '\'' {
				raw = `"` + strings.ReplaceAll(string(runes[i+1:end]), `"`, `\"`) + `"`
			}
			lit, err := strconv.Unquote(raw)
			if err != nil {
				t.Fatalf("undecodable string literal %s in %q: %v", raw, q, err)
			}
			literals = append(literals, lit)
			skeleton.WriteString("S")
			i = end
			continue
		case '(', '[', '{':
			open = append(open, r)
		case ')', ']', '}':
			if len(open) == 0 || open[len(open)-1] != closers[r] {
				t.Fatalf("unbalanced %q in %q", r, q)
			}
			open = open[:len(open)-1]
		}
		skeleton.WriteRune(r)
	}
	if len(open) > 0 {
		t.Fatalf("unclosed %q in %q", string(open), q)
	}
	return skeleton.String(), literals
}
