package helm

import (
	"strings"
	"testing"
)

// badValues are values values.schema.json (or, for what a schema cannot
// say, the templates) must refuse, each with the words its message must
// hold: the key, so a user knows what to fix.
var badValues = []struct {
	name string
	args []string
	want []string
	// byTemplate marks a rule a template enforces with fail, which helm
	// lint, rendering in its lint mode, reports as a warning only.
	byTemplate bool
}{
	{"replicas not a number", []string{"--set-string", "replicas=two"}, []string{"replicas", "integer"}, false},
	{"negative replicas", []string{"--set", "replicas=-1"}, []string{"replicas", "minimum"}, false},
	{"unknown top-level key", []string{"--set", "replica=2"}, []string{"replica", "additional properties"}, false},
	{"unknown nested key", []string{"--set", "image.tags=v1"}, []string{"image", "tags", "additional properties"}, false},
	{"bad pullPolicy", []string{"--set", "image.pullPolicy=Sometimes"}, []string{"pullPolicy", "IfNotPresent"}, false},
	{"digest without its algorithm", []string{"--set", "image.digest=0123abcd"}, []string{"digest", "does not match pattern"}, false},
	{"QPS not a number", []string{"--set-string", "manager.kubeAPIQPS=fast"}, []string{"kubeAPIQPS", "number"}, false},
	{"zero QPS", []string{"--set", "manager.kubeAPIQPS=0"}, []string{"kubeAPIQPS", "exclusiveMinimum"}, false},
	{"fractional burst", []string{"-f", "testdata/fractional-burst.yaml"}, []string{"kubeAPIBurst", "got number, want null or integer"}, false},
	{"zero concurrency", []string{"--set", "manager.concurrent=0"}, []string{"concurrent", "minimum"}, false},
	{"watch namespaces as one string", []string{"--set", "manager.watchNamespaces=team-a"}, []string{"watchNamespaces", "array"}, false},
	{"grace without a unit", []string{"--set", "manager.unresponsiveNodeGrace=300"}, []string{"unresponsiveNodeGrace", "string"}, false},
	{"grace in words", []string{"--set", "manager.unresponsiveNodeGrace=5 minutes"}, []string{"unresponsiveNodeGrace", "does not match pattern"}, false},
	{"events address without its scheme", []string{"--set", "manager.eventsAddr=notification-controller.flux-system"}, []string{"eventsAddr", "does not match pattern"}, false},
	{"bad log level", []string{"--set", "manager.logLevel=verbose"}, []string{"logLevel", "info"}, false},
	{"extra argument not a flag", []string{"--set", "manager.extraArgs={pprof}"}, []string{"extraArgs", "does not match pattern"}, false},
	{"metrics port out of range", []string{"--set", "metrics.port=70000"}, []string{"port", "maximum"}, false},
	{"label value not a string", []string{"--set", "metrics.serviceMonitor.labels.release=1"}, []string{"serviceMonitor", "release", "string"}, false},
	{"unknown key under serviceMonitor", []string{"--set", "metrics.serviceMonitor.interval=30s"}, []string{"serviceMonitor", "interval", "additional properties"}, false},
	{"misspelt pod security field", []string{"--set", "podSecurityContext.runAsNonroot=true"}, []string{"/podSecurityContext", "additional properties 'runAsNonroot'"}, false},
	{"misspelt toleration field", []string{"--set", "tolerations[0].keys=gpu"}, []string{"/tolerations/0", "additional properties 'keys'"}, false},
	{"rbac.create not a boolean", []string{"--set-string", "rbac.create=yes"}, []string{"create", "boolean"}, false},
	{"pdb percentage in words", []string{"--set", "podDisruptionBudget.maxUnavailable=half"}, []string{"maxUnavailable", "does not match pattern"}, false},
	{"pdb with both bounds", []string{"--set", "podDisruptionBudget.enabled=true", "--set", "podDisruptionBudget.minAvailable=1", "--set", "podDisruptionBudget.maxUnavailable=1"},
		[]string{"podDisruptionBudget", "minAvailable or maxUnavailable, not both"}, true},
}

func TestSchemaRefusesBadValues(t *testing.T) {
	for _, tc := range badValues {
		t.Run(tc.name, func(t *testing.T) {
			cmds := [][]string{append([]string{"template", release, chartDir(), "-n", namespace}, tc.args...)}
			if !tc.byTemplate {
				cmds = append(cmds, append([]string{"lint", chartDir()}, tc.args...))
			}
			for _, cmd := range cmds {
				out, err := helm(t, cmd...)
				if err == nil {
					t.Fatalf("helm %s accepted %v:\n%s", cmd[0], tc.args, out)
				}
				for _, want := range tc.want {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("helm %s refused %v without saying %q: %v", cmd[0], tc.args, want, err)
					}
				}
				t.Logf("helm %s: %v", cmd[0], lastLines(err.Error()))
			}
		})
	}
}

// lastLines keeps the tail of a message, where helm names the problem.
func lastLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-3):], " / ")
}
