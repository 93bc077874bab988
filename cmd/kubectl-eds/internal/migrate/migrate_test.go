package migrate

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/gomega"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/clitest"
)

var env *clitest.Env

func TestMain(m *testing.M) { os.Exit(clitest.Main(m, &env)) }

// result is what one run of the command printed, and its exit code.
type result struct {
	out, err string
	code     int
}

// runMigrate runs `kubectl eds migrate` with args in the test process; it
// never contacts a cluster.
func runMigrate(stdin io.Reader, args ...string) result {
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	var out, errOut bytes.Buffer
	o := cli.NewOptions(genericiooptions.IOStreams{In: stdin, Out: &out, ErrOut: &errOut})
	code := cli.Execute(o, cli.NewRoot(o, Commands), append([]string{"migrate"}, args...))
	return result{out: out.String(), err: errOut.String(), code: code}
}

// Real-world manifests migrate to the manifests and reports of
// testdata/golden: the manifest on the standard output, warnings, notes
// and steps on the standard error.
func TestMigratesRealWorldManifests(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	gomega.NewWithT(t).Expect(err).NotTo(gomega.HaveOccurred())
	gomega.NewWithT(t).Expect(inputs).NotTo(gomega.BeEmpty())
	for _, input := range inputs {
		name := strings.TrimSuffix(filepath.Base(input), ".yaml")
		t.Run(name, func(t *testing.T) {
			r := runMigrate(nil, "-f", input)
			gomega.NewWithT(t).Expect(r.code).To(gomega.Equal(cli.ExitOK), r.err)
			expectGolden(t, name+".out.yaml", r.out)
			expectGolden(t, name+".err.txt", r.err)
		})
	}
}

// -o json prints one object as itself and several as a List; the
// standard input is read with -f -.
func TestPrintsJSONAndReadsStandardInput(t *testing.T) {
	g := gomega.NewWithT(t)
	manifest, err := os.ReadFile(filepath.Join("testdata", "datadog-agent.yaml"))
	g.Expect(err).NotTo(gomega.HaveOccurred())

	r := runMigrate(bytes.NewReader(manifest), "-f", "-", "-o", "json")
	g.Expect(r.code).To(gomega.Equal(cli.ExitOK), r.err)
	var list struct {
		Kind  string
		Items []struct{ Kind string }
	}
	g.Expect(json.Unmarshal([]byte(r.out), &list)).To(gomega.Succeed())
	g.Expect(list.Kind).To(gomega.Equal("List"))
	g.Expect(list.Items).To(gomega.HaveLen(2))
	g.Expect(list.Items[0].Kind).To(gomega.Equal("ExtendedDaemonSet"))
	g.Expect(list.Items[1].Kind).To(gomega.Equal("ExtendedDaemonsetSetting"))

	r = runMigrate(nil, "-f", filepath.Join("testdata", "daemonset-ondelete.yaml"), "-o", "json")
	g.Expect(r.code).To(gomega.Equal(cli.ExitOK), r.err)
	expectGolden(t, "daemonset-ondelete.out.json", r.out)
}

// The items of a List, as `kubectl get daemonsets -o yaml` prints them,
// are migrated one by one, and named by their place in messages.
func TestMigratesTheItemsOfAList(t *testing.T) {
	g := gomega.NewWithT(t)
	r := runMigrate(strings.NewReader(`apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: DaemonSet
  metadata: {name: a, namespace: agents}
  spec:
    selector: {matchLabels: {app: a}}
    template:
      metadata: {labels: {app: a}}
      spec: {containers: [{name: a, image: "a:1"}]}
- apiVersion: apps/v1
  kind: DaemonSet
  metadata: {name: b, namespace: agents}
  spec:
    selector: {matchLabels: {app: b}}
    template:
      metadata: {labels: {app: b}}
      spec: {containers: [{name: b, image: "b:1"}]}
`), "-f", "-")
	g.Expect(r.code).To(gomega.Equal(cli.ExitOK), r.err)
	g.Expect(strings.Count(r.out, "kind: ExtendedDaemonSet\n")).To(gomega.Equal(2))
	g.Expect(r.out).To(gomega.ContainSubstring("---\n"))
	g.Expect(r.err).To(gomega.ContainSubstring("To replace DaemonSet agents/a"))
	g.Expect(r.err).To(gomega.ContainSubstring("To replace DaemonSet agents/b"))
}

// Every field the source kind does not know, or that has no meaning here,
// is named in a warning of its own; the rest of the object migrates.
func TestWarnsOnEveryFieldLeftOut(t *testing.T) {
	g := gomega.NewWithT(t)
	r := runMigrate(strings.NewReader(`apiVersion: datadoghq.com/v1alpha1
kind: ExtendedDaemonSet
metadata:
  name: agent
  namespace: agents
  ownerReferences: [{apiVersion: datadoghq.com/v1alpha1, kind: DatadogAgent, name: datadog, uid: 1f6a}]
  finalizers: [finalizer.agent.datadoghq.com]
  annotations:
    extendeddaemonset.datadoghq.com/rollout-frozen: "true"
    extendeddaemonset.datadoghq.com/canary-paused-reason: OOMKilled
    extendeddaemonset.datadoghq.com/templatehash: 9f2c
spec:
  strategy:
    reconcileFrequency: 30s
    canary:
      replicas: 2
      manualValidation: true
    rollingUpdate:
      maxUnavailable: 1
      burst: 3
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: "agent:7"}]}
  paused: true
extra: field
`), "-f", "-")
	g.Expect(r.code).To(gomega.Equal(cli.ExitOK), r.err)
	for _, want := range []string{
		"warning: ExtendedDaemonSet agents/agent: extra: unknown field, left out\n",
		"warning: ExtendedDaemonSet agents/agent: metadata.finalizers: left out: ",
		"warning: ExtendedDaemonSet agents/agent: metadata.ownerReferences: left out: ",
		"warning: ExtendedDaemonSet agents/agent: metadata.annotations[extendeddaemonset.datadoghq.com/rollout-frozen]: renamed extendeddaemonset.io/rollout-frozen; ",
		"warning: ExtendedDaemonSet agents/agent: metadata.annotations[extendeddaemonset.datadoghq.com/canary-paused-reason]: left out: ",
		"warning: ExtendedDaemonSet agents/agent: metadata.annotations[extendeddaemonset.datadoghq.com/templatehash]: unknown to this controller, left out\n",
		"warning: ExtendedDaemonSet agents/agent: spec.paused: unknown field, left out\n",
		"warning: ExtendedDaemonSet agents/agent: spec.strategy.canary.manualValidation: unknown field, left out\n",
		"warning: ExtendedDaemonSet agents/agent: spec.strategy.rollingUpdate.burst: unknown field, left out\n",
		"warning: ExtendedDaemonSet agents/agent: spec.strategy.reconcileFrequency: left out: ",
	} {
		g.Expect(r.err).To(gomega.ContainSubstring(want))
	}
	g.Expect(strings.Count(r.err, "warning: ")).To(gomega.Equal(10), r.err)
	g.Expect(r.out).To(gomega.ContainSubstring("extendeddaemonset.io/rollout-frozen: \"true\""))
	g.Expect(r.out).To(gomega.ContainSubstring("replicas: 2"))
	g.Expect(r.out).NotTo(gomega.Or(gomega.ContainSubstring("burst"), gomega.ContainSubstring("finalizer"), gomega.ContainSubstring("DatadogAgent")))
}

// Bad input fails with an error that names the input, the document and
// what is wrong, and prints no manifest: half a manifest would be applied
// half.
func TestRefusesBadInputWithAClearError(t *testing.T) {
	ds := func(extra string) string {
		return `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: agents}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: "agent:1"}]}
` + extra
	}
	canary := func(fields string) string {
		return `apiVersion: datadoghq.com/v1alpha1
kind: ExtendedDaemonSet
metadata: {name: agent}
spec:
  strategy:
    canary: {` + fields + `}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: "agent:1"}]}
`
	}
	for _, tc := range []struct {
		name, input, want string
	}{
		{"not YAML", "kind: [DaemonSet\n", "standard input: document 1: not valid YAML: "},
		{"duplicate key", "kind: DaemonSet\nkind: DaemonSet\n", "document 1: not valid YAML: "},
		{"a scalar", "just text\n", "document 1: not a Kubernetes object: want a mapping with apiVersion and kind, got the string \"just text\""},
		{"empty", "# nothing\n---\n", "no object to migrate: the input is empty"},
		{"no kind", "apiVersion: apps/v1\nmetadata: {name: a}\n", "document 1: not a Kubernetes object: apiVersion or kind is missing"},
		{"unknown kind", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n",
			"document 1 (Deployment web): cannot migrate a Deployment of apiVersion apps/v1: migrate takes apps/v1 DaemonSets, and datadoghq.com/v1alpha1 ExtendedDaemonSets and ExtendedDaemonsetSettings"},
		{"old DaemonSet version", "apiVersion: extensions/v1beta1\nkind: DaemonSet\nmetadata: {name: agent}\n",
			"document 1 (DaemonSet agent): a DaemonSet of apiVersion extensions/v1beta1: migrate takes apps/v1 ones"},
		{"already ours", "apiVersion: extendeddaemonset.io/v1alpha1\nkind: ExtendedDaemonSet\nmetadata: {name: agent}\n",
			"document 1 (ExtendedDaemonSet agent): already an extendeddaemonset.io object: nothing to migrate"},
		{"missing name", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {generateName: agent-}\n", "document 1: metadata.name is missing"},
		{"no metadata", "apiVersion: apps/v1\nkind: DaemonSet\n", "document 1: metadata.name is missing"},
		{"second document bad", ds("---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {namespace: agents}\n"), "document 2: metadata.name is missing"},
		{"no template", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec: {selector: {matchLabels: {app: agent}}}\n",
			"document 1 (DaemonSet agent): spec.template is missing"},
		{"spec not an object", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec: [1]\n",
			"document 1 (DaemonSet agent): spec: want an object, got a list"},
		{"misspelt template field", strings.Replace(ds(""), "containers:", "containerz:", 1),
			"document 1 (DaemonSet agents/agent): the result is not a valid ExtendedDaemonSet: strict decoding error: unknown field \"spec.template.spec.containerz\""},
		{"wrong type", strings.Replace(ds(""), `"agent:1"`, "[agent]", 1),
			"document 1 (DaemonSet agents/agent): the result is not a valid ExtendedDaemonSet: "},
		{"noRestartsDuration longer than duration", canary("duration: 5m, noRestartsDuration: 10m"),
			"document 1 (ExtendedDaemonSet agent): spec.strategy.canary.noRestartsDuration (10m0s) is longer than the duration (5m0s)"},
		{"autoFail below autoPause", canary("autoPause: {maxRestarts: 8}, autoFail: {enabled: false}"),
			"spec.strategy.canary.autoFail.maxRestarts (5) is below autoPause.maxRestarts (8)"},
		{"canaryTimeout not longer than duration", canary("duration: 20m, autoFail: {enabled: false, canaryTimeout: 15m}"),
			"spec.strategy.canary.autoFail.canaryTimeout (15m0s) is not longer than the duration (20m0s)"},
		{"setting without reference", "apiVersion: datadoghq.com/v1alpha1\nkind: ExtendedDaemonsetSetting\nmetadata: {name: big}\nspec: {nodeSelector: {}}\n",
			"document 1 (ExtendedDaemonsetSetting big): spec.reference.name is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			r := runMigrate(strings.NewReader(tc.input), "-f", "-")
			g.Expect(r.code).To(gomega.Equal(cli.ExitFailed))
			g.Expect(r.out).To(gomega.BeEmpty())
			g.Expect(r.err).To(gomega.HavePrefix("error: "))
			g.Expect(r.err).To(gomega.ContainSubstring(tc.want))
		})
	}
}

// The original's canary restart checks are ours, so nothing is written
// for them, but for the one case where ours would differ: autoPause and
// autoFail both disabled, where the original still held promotion on a
// recent restart.
func TestWritesOutTheOriginalsNoRestartsDurationOnlyWhereOursDiffers(t *testing.T) {
	canary := func(fields string) string {
		return "apiVersion: datadoghq.com/v1alpha1\nkind: ExtendedDaemonSet\nmetadata: {name: agent}\nspec:\n  strategy:\n    canary: {" + fields +
			"}\n  template:\n    metadata: {labels: {app: agent}}\n    spec: {containers: [{name: agent, image: \"agent:1\"}]}\n"
	}
	for _, tc := range []struct{ name, fields, want string }{
		{"defaults", "duration: 10m", ""},
		{"one check on", "duration: 10m, autoPause: {enabled: false}", ""},
		{"both checks off", "duration: 10m, autoPause: {enabled: false}, autoFail: {enabled: false}", "noRestartsDuration: 5m"},
		{"both off, a short canary", "duration: 2m, autoPause: {enabled: false}, autoFail: {enabled: false}", "noRestartsDuration: 2m"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			r := runMigrate(strings.NewReader(canary(tc.fields)), "-f", "-")
			g.Expect(r.code).To(gomega.Equal(cli.ExitOK), r.err)
			g.Expect(r.out).NotTo(gomega.ContainSubstring("maxRestarts"), "the schema's defaults are the original's")
			if tc.want == "" {
				g.Expect(r.out).NotTo(gomega.ContainSubstring("noRestartsDuration"))
				return
			}
			g.Expect(r.out).To(gomega.ContainSubstring(tc.want))
			g.Expect(r.err).To(gomega.ContainSubstring("with autoPause and autoFail both disabled"))
		})
	}
}

// Every bad document is told, not only the first.
func TestTellsEveryBadDocument(t *testing.T) {
	g := gomega.NewWithT(t)
	r := runMigrate(strings.NewReader("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: b}\n"), "-f", "-")
	g.Expect(r.code).To(gomega.Equal(cli.ExitFailed))
	g.Expect(r.err).To(gomega.ContainSubstring("document 1 (ConfigMap a): cannot migrate a ConfigMap"))
	g.Expect(r.err).To(gomega.ContainSubstring("document 2 (DaemonSet b): spec.template is missing"))
}

func TestRefusesBadFlags(t *testing.T) {
	g := gomega.NewWithT(t)
	r := runMigrate(nil)
	g.Expect(r.code).To(gomega.Equal(cli.ExitFailed))
	g.Expect(r.err).To(gomega.ContainSubstring(`"filename" not set`))

	r = runMigrate(nil, "-f", filepath.Join("testdata", "daemonset-ondelete.yaml"), "-o", "wide")
	g.Expect(r.code).To(gomega.Equal(cli.ExitFailed))
	g.Expect(r.err).To(gomega.ContainSubstring(`unknown output format "wide": -o takes yaml or json`))

	r = runMigrate(nil, "-f", filepath.Join("testdata", "missing.yaml"))
	g.Expect(r.code).To(gomega.Equal(cli.ExitFailed))
	g.Expect(r.err).To(gomega.ContainSubstring("reading the manifest: open testdata/missing.yaml: no such file or directory"))
}
