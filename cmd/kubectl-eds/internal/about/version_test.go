package about

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/gomega"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/internal/version"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// runVersion runs `kubectl eds version` with args against a kubeconfig
// that does not exist and a client factory that fails the test: the
// command must reach neither.
func runVersion(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	o := cli.NewOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	o.SetClientFactory(func(*rest.Config) (client.Client, error) {
		t.Error("kubectl eds version built a client")
		return nil, errors.New("no cluster in this test")
	})
	args = append([]string{"version", "--kubeconfig", filepath.Join(t.TempDir(), "missing")}, args...)
	code := cli.Execute(o, cli.NewRoot(o, Commands), args)
	return out.String(), errOut.String(), code
}

func TestVersionPrintsOneLine(t *testing.T) {
	g := gomega.NewWithT(t)
	out, errOut, code := runVersion(t)
	g.Expect(code).To(gomega.Equal(cli.ExitOK), errOut)
	g.Expect(out).To(gomega.Equal("kubectl-eds " + version.Get().String() + "\n"))
	g.Expect(errOut).To(gomega.BeEmpty())
}

// -o json and -o yaml print the same fields, as kubectl version does.
func TestVersionAsJSONAndYAML(t *testing.T) {
	g := gomega.NewWithT(t)
	want := version.Get()
	for _, format := range []string{"json", "yaml"} {
		out, errOut, code := runVersion(t, "-o", format)
		g.Expect(code).To(gomega.Equal(cli.ExitOK), errOut)
		var got version.Info
		if format == "json" {
			g.Expect(json.Unmarshal([]byte(out), &got)).To(gomega.Succeed(), out)
		} else {
			g.Expect(yaml.UnmarshalStrict([]byte(out), &got)).To(gomega.Succeed(), out)
		}
		g.Expect(got).To(gomega.Equal(want), format)
		g.Expect(out).To(gomega.ContainSubstring("goVersion"), format)
	}
}

func TestVersionRefusesAnUnknownFormat(t *testing.T) {
	g := gomega.NewWithT(t)
	out, errOut, code := runVersion(t, "-o", "wide")
	g.Expect(code).To(gomega.Equal(cli.ExitFailed))
	g.Expect(out).To(gomega.BeEmpty())
	g.Expect(errOut).To(gomega.Equal("error: unknown output format \"wide\": -o takes json or yaml\n"))
}
