package clitest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
	"github.com/extendeddaemonset/extendeddaemonset/controllers"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/envkubelet"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

// logsEnv, when set, sends the controllers' logs to the standard error.
const logsEnv = "EDS_TEST_LOGS"

// Env is the cluster the commands run against.
type Env struct {
	// Config is the admin's connection, Client an admin client that reads
	// around any cache.
	Config *rest.Config
	Client client.Client
	// Kubeconfig is a kubeconfig file for the admin, passed to every
	// command with --kubeconfig.
	Kubeconfig string
	envtest    *envtest.Environment
}

// Main is the body of a TestMain: it starts envtest with the CRDs, the
// real controllers and the kubelet, sets *env, runs the tests and stops
// everything. With -short it runs the tests without a cluster (they skip
// through Scenario).
func Main(m *testing.M, env **Env) int {
	if testenv.Short() {
		return m.Run()
	}
	return testenv.Run(func(te *envtest.Environment, c client.Client) int {
		dir, err := os.MkdirTemp("", "kubectl-eds-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		e := &Env{Config: te.Config, Client: c, Kubeconfig: filepath.Join(dir, "kubeconfig"), envtest: te}
		if err := writeKubeconfig(te.Config, e.Kubeconfig); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		log := logr.Discard()
		if os.Getenv(logsEnv) != "" {
			log = zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true))
		}
		mgr, err := harness.StartControllers(ctx, te.Config, controllers.Options{}, log)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		go envkubelet.Run(ctx, c, client.HasLabels{v1alpha1.ExtendedDaemonSetNameLabel})
		*env = e
		code := m.Run()
		cancel()
		if err := mgr.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "controllers: %v\n", err)
			code = max(code, 1)
		}
		return code
	})
}

// writeKubeconfig writes cfg as a kubeconfig file whose current context
// has no namespace: commands take -n, or act in "default".
func writeKubeconfig(cfg *rest.Config, path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken,
	}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("writing the kubeconfig: %w", err)
	}
	return nil
}

// Result is what a command printed, and its exit code.
type Result struct {
	Out, Err string
	Code     int
}

// Run runs the root made of groups with args (and --kubeconfig), in the
// test process, and returns what it printed.
func (e *Env) Run(t testing.TB, groups []cli.Group, args ...string) Result {
	t.Helper()
	return e.RunWithInput(t, groups, nil, args...)
}

// RunWithInput is Run with in as the standard input.
func (e *Env) RunWithInput(t testing.TB, groups []cli.Group, in io.Reader, args ...string) Result {
	t.Helper()
	var out, errOut bytes.Buffer
	if in == nil {
		in = strings.NewReader("")
	}
	o := cli.NewOptions(genericiooptions.IOStreams{In: in, Out: &out, ErrOut: &errOut})
	code := cli.Execute(o, cli.NewRoot(o, groups...), append([]string{"--kubeconfig", e.Kubeconfig}, args...))
	return Result{Out: out.String(), Err: errOut.String(), Code: code}
}

// Scenario is one test in a namespace of its own.
type Scenario struct {
	*Env
	T         *testing.T
	G         *gomega.WithT
	Ctx       context.Context
	Namespace string
}

var unsafeNameChars = regexp.MustCompile(`[^a-z0-9-]+`)

// NewScenario creates the test's namespace, or skips the test without a
// cluster (-short, or no envtest binaries).
func (e *Env) NewScenario(t *testing.T) *Scenario {
	t.Helper()
	if e == nil {
		t.Skip("needs envtest: run without -short")
	}
	name := strings.Trim(unsafeNameChars.ReplaceAllString(strings.ToLower(strings.TrimPrefix(t.Name(), "Test")), "-"), "-")
	s := &Scenario{Env: e, T: t, G: gomega.NewWithT(t), Ctx: t.Context(), Namespace: name[:min(len(name), 40)] + "-" + utilrand.String(5)}
	s.G.SetDefaultEventuallyTimeout(eventually)
	s.G.SetDefaultEventuallyPollingInterval(polling)
	s.G.Expect(e.Client.Create(s.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.Namespace}})).To(gomega.Succeed())
	return s
}
