package monitoring

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	promharness "github.com/extendeddaemonset/extendeddaemonset/test/harness/prometheus"
)

const alertTests = "testdata/alerts_test.yaml"

// The PrometheusRule's groups pass `promtool check rules`, and the alerts
// fire on the series promtool's unit tests feed them, and only then. Every
// alert needs a unit test in which it fires.
func TestRulesPassPromtool(t *testing.T) {
	promtool, err := promharness.PromtoolPath()
	if err != nil {
		t.Fatal(err)
	}
	groups := ruleGroups(t)
	rules, err := yaml.Marshal(map[string][]ruleGroup{"groups": groups})
	if err != nil {
		t.Fatal(err)
	}
	// The unit tests name rules.yaml relative to themselves.
	dir := t.TempDir()
	rulesPath, testsPath := filepath.Join(dir, "rules.yaml"), filepath.Join(dir, "alerts_test.yaml")
	tests := readFile(t, alertTests)
	for path, data := range map[string][]byte{rulesPath: rules, testsPath: tests} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"check", "rules", rulesPath}, {"test", "rules", testsPath}} {
		out, err := exec.CommandContext(t.Context(), promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}

	var unit struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string `json:"alertname"`
				ExpAlerts []any  `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(tests, &unit); err != nil {
		t.Fatalf("%s: %v", alertTests, err)
	}
	firing := map[string]bool{}
	for _, test := range unit.Tests {
		for _, at := range test.AlertRuleTest {
			firing[at.Alertname] = firing[at.Alertname] || len(at.ExpAlerts) > 0
		}
	}
	for _, g := range groups {
		for _, r := range g.Rules {
			if r.Alert != "" && !firing[r.Alert] {
				t.Errorf("alert %s fires in no test of %s", r.Alert, alertTests)
			}
		}
	}
}
