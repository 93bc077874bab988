package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/internal/version"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func httpStatus(url string) int {
	resp, err := (&http.Client{Timeout: time.Second}).Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// versionVar is the variable VERSION_LDFLAGS sets to the version.
const versionVar = "github.com/extendeddaemonset/extendeddaemonset/cmd/internal/version.version"

const testVersion = "v0.0.0-managertest"

// The manager binary starts against a real API server, answers its probes,
// takes the leader lease, and exits cleanly on SIGTERM.
func TestManagerServesProbesAndStopsOnSignal(t *testing.T) {
	testenv.RequireAssets(t)
	g := gomega.NewWithT(t)
	env, cfg, err := harness.StartEnvtest(filepath.Join(harness.RepoRoot(), "config/crd/bases"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()

	user, err := env.ControlPlane.AddUser(envtest.User{Name: "manager", Groups: []string{"system:masters"}}, nil)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	kubeconfig, err := user.KubeConfig()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	dir := t.TempDir()
	kubeconfigPath := filepath.Join(dir, "kubeconfig")
	g.Expect(os.WriteFile(kubeconfigPath, kubeconfig, 0o600)).To(gomega.Succeed())

	// Linked as the Makefile links it, the manager prints and logs that version.
	bin := filepath.Join(dir, "manager")
	build := exec.Command("go", "build", "-ldflags", "-X "+versionVar+"="+testVersion, "-o", bin, ".")
	build.Stderr = os.Stderr
	g.Expect(build.Run()).To(gomega.Succeed())
	printed, err := exec.Command(bin, "--version").Output()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(string(printed)).To(gomega.HavePrefix(controllerName + " " + testVersion + " (commit "))

	probes, metrics := freeAddr(t), freeAddr(t)
	cmd := exec.Command(bin,
		"--health-probe-bind-address="+probes, "--metrics-bind-address="+metrics,
		"--enable-leader-election", "--leader-election-namespace=default",
		"--watch-namespaces=default,kube-system", "--kube-api-qps=30", "--log-level=debug")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfigPath)
	var logs bytes.Buffer // read once the manager has exited
	cmd.Stdout, cmd.Stderr = os.Stderr, io.MultiWriter(os.Stderr, &logs)
	g.Expect(cmd.Start()).To(gomega.Succeed())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { _ = cmd.Process.Kill() }()

	for _, path := range []string{"/healthz", "/readyz"} {
		g.Eventually(func() int { return httpStatus(fmt.Sprintf("http://%s%s", probes, path)) }).
			WithTimeout(30*time.Second).Should(gomega.Equal(http.StatusOK), path)
	}

	// The secured metrics endpoint refuses a caller without credentials.
	insecure := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: insecureTLS()}}
	g.Eventually(func() int {
		resp, err := insecure.Get("https://" + metrics + "/metrics")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}).WithTimeout(30 * time.Second).Should(gomega.Equal(http.StatusUnauthorized))

	k8s, err := client.New(cfg, client.Options{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Eventually(func() error {
		return k8s.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "extendeddaemonset.io"}, &coordinationv1.Lease{})
	}).WithTimeout(30*time.Second).Should(gomega.Succeed(), "the manager takes the leader election lease")

	g.Expect(cmd.Process.Signal(syscall.SIGTERM)).To(gomega.Succeed())
	g.Eventually(exited).WithTimeout(30*time.Second).Should(gomega.Receive(gomega.BeNil()), "the manager exits 0 on SIGTERM")
	g.Expect(logs.String()).To(gomega.MatchRegexp(`"msg":"build","version":"`+testVersion+`","commit":"[^"]+","date":"[^"]+"`),
		"the manager logs its version at start")
	g.Expect(logs.String()).To(gomega.MatchRegexp(`"msg":"soft memory limit","source":"(none|container|GOMEMLIMIT)"`),
		"the manager logs the soft memory limit it runs with")
}

func TestBadFlagIsRefused(t *testing.T) {
	if err := run([]string{"--no-such-flag"}, io.Discard); err == nil {
		t.Fatal("an unknown flag was accepted")
	}
}

// A bad --allowed-webhook-hosts stops the manager before it reads a
// kubeconfig (with none to read, it would exit the test process), naming
// the flag and the entry.
func TestBadAllowedWebhookHostsIsRefused(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "missing"))
	err := run([]string{"--allowed-webhook-hosts=127.0.0.1,10.0.0.0/33"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--allowed-webhook-hosts") || !strings.Contains(err.Error(), `"10.0.0.0/33"`) {
		t.Fatalf("got %v", err)
	}
}

// --version prints one line and returns without reading a kubeconfig:
// with none to read, the manager would exit the test process.
func TestVersionFlagPrintsAndStartsNothing(t *testing.T) {
	g := gomega.NewWithT(t)
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "missing"))
	var out bytes.Buffer
	g.Expect(run([]string{"--version", "--metrics-bind-address=:0"}, &out)).To(gomega.Succeed())
	g.Expect(out.String()).To(gomega.MatchRegexp(`^` + controllerName + ` \S+ \(commit \S+, built \S+, go\S+ \S+/\S+\)\n$`))
	g.Expect(out.String()).To(gomega.ContainSubstring(version.Get().String()))
}
