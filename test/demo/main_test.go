package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/proc"
)

// marker is carried by every process the test starts, for proc.Leftovers.
var marker = proc.Mark()

// buildAll builds the demo, the manager and the plugin into dir, as make
// run and make demo do.
func buildAll(t *testing.T, dir string) (demo, manager, plugin string) {
	t.Helper()
	root := harness.RepoRoot()
	for _, b := range []struct{ out, pkg string }{
		{"demo", "./test/demo"}, {"manager", "./cmd/manager"}, {"kubectl-eds", "./cmd/kubectl-eds"},
	} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, b.out), b.pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN=auto")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	return filepath.Join(dir, "demo"), filepath.Join(dir, "manager"), filepath.Join(dir, "kubectl-eds")
}

// lockedBuffer collects a process's output while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var prometheusLine = regexp.MustCompile(`Prometheus at (http://\S+)`)

// make run's entry point, run as a newcomer runs it: it comes up with the
// demo rolled out and a canary judged on data Prometheus scraped, make
// demo's story plays on it, and Ctrl-C leaves no process, temporary
// directory or kubeconfig behind.
func TestLiveDemoThenStoryThenCleanStop(t *testing.T) {
	testenv.RequireAssets(t)
	g := gomega.NewWithT(t)
	work := t.TempDir()
	demo, manager, plugin := buildAll(t, work)
	tmp := filepath.Join(work, "tmp")
	g.Expect(os.Mkdir(tmp, 0o755)).To(gomega.Succeed())
	kubeconfig := filepath.Join(work, "run.kubeconfig")

	var out lockedBuffer
	live := exec.Command(demo, "--nodes", "4", "--manager", manager, "--kubeconfig", kubeconfig)
	// Everything the demo writes outside the kubeconfig goes under tmp.
	live.Env = append(os.Environ(), "TMPDIR="+tmp)
	live.Stdout, live.Stderr = &out, &out
	live.WaitDelay = 5 * time.Second
	g.Expect(live.Start()).To(gomega.Succeed())
	exited := make(chan error, 1)
	go func() { exited <- live.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = live.Process.Signal(syscall.SIGINT)
			if err := <-exited; err != nil {
				t.Logf("make run: %v", err)
			}
		}
		if t.Failed() {
			t.Logf("make run's output:\n%s", out.String())
		}
	})

	// The next steps are printed once v1 is out and v2's canary started.
	var promURL string
	g.Eventually(func(g gomega.Gomega) {
		m := prometheusLine.FindStringSubmatch(out.String())
		g.Expect(m).NotTo(gomega.BeNil(), "no next steps printed yet")
		promURL = m[1]
	}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(gomega.Succeed())
	c := clientOf(t, kubeconfig)

	// The canary is judged on what Prometheus scraped: the controller
	// recorded numbers it measured.
	var sawMeasured bool
	g.Eventually(func(g gomega.Gomega) {
		eds := getDemo(g, c)
		sawMeasured = sawMeasured || measured(eds) > 0
		g.Expect(sawMeasured).To(gomega.BeTrue(), "no measurement of the canary yet")
		g.Expect(eds.Status.ObservedGeneration).To(gomega.Equal(eds.Generation))
		g.Expect(eds.Status.Canary).To(gomega.BeNil(), "canary still running")
		g.Expect(eds.Status.Conditions).To(gomega.ContainElement(gomega.And(
			gomega.HaveField("Type", v1alpha1.ReadyCondition), gomega.HaveField("Status", gomega.BeEquivalentTo("True")))))
	}).WithTimeout(2 * time.Minute).WithPolling(250 * time.Millisecond).Should(gomega.Succeed())
	var pods corev1.PodList
	g.Expect(c.List(context.Background(), &pods, client.InNamespace(demoNamespace))).To(gomega.Succeed())
	g.Expect(pods.Items).To(gomega.HaveLen(4))
	for _, pod := range pods.Items {
		g.Expect(pod.Spec.Containers[0].Image).To(gomega.Equal("demo-agent:v2"), "pod %s", pod.Name)
	}
	t.Logf("demo ready, judged by %s", promURL)

	// make demo, on the cluster of make run.
	story := exec.Command(demo, "--story", "--manager", manager, "--plugin", plugin, "--kubeconfig", kubeconfig)
	story.Env = live.Env
	began := time.Now()
	storyOut, err := story.CombinedOutput()
	t.Logf("the story took %s", time.Since(began).Round(time.Second))
	g.Expect(err).NotTo(gomega.HaveOccurred(), "make demo's story:\n%s", storyOut)
	for _, want := range []string{
		"playing on the running demo",
		"v3, a healthy version",
		"error-rate: 0.3 > max 0.05", // the bad version's error rate, as measured
		"The spec is as git wrote it: image demo-agent:v4",
		"kstatus, as Flux reads it: Failed",
		"$ kubectl eds canary retry demo",
		"$ kubectl eds rollback demo",
		"Running (RolledOut)",
	} {
		g.Expect(string(storyOut)).To(gomega.ContainSubstring(want))
	}
	g.Expect(getDemo(g, c).Spec.Template.Spec.Containers[0].Image).To(gomega.Equal("demo-agent:v3"), "rolled back to v3")

	g.Expect(live.Process.Signal(syscall.SIGINT)).To(gomega.Succeed())
	g.Expect(<-exited).To(gomega.Succeed(), "make run exits 0 on Ctrl-C")
	stopped = true
	left, err := proc.Leftovers(marker, "")
	g.Expect(err).NotTo(gomega.HaveOccurred())
	if len(left) > 0 {
		proc.Kill(left)
		t.Fatalf("processes left behind: %v", left)
	}
	entries, err := os.ReadDir(tmp)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(entries).To(gomega.BeEmpty(), "temporary files left behind")
	g.Expect(kubeconfig).NotTo(gomega.BeAnExistingFile(), "the kubeconfig of a stopped cluster is removed")
}

func clientOf(t *testing.T, kubeconfig string) client.Client {
	t.Helper()
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(config, client.Options{Scheme: scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func getDemo(g gomega.Gomega, c client.Client) *v1alpha1.ExtendedDaemonSet {
	eds := &v1alpha1.ExtendedDaemonSet{}
	g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: demoNamespace, Name: demoName}, eds)).To(gomega.Succeed())
	return eds
}

// Every version the story writes is a valid ExtendedDaemonSet whose agent
// fails the share of requests it says.
func TestManifestCarriesVersionAndErrorRate(t *testing.T) {
	for _, v := range []version{{Number: 1}, {Number: 7, ErrorRate: badErrorRate}} {
		obj, err := manifest(v, "http://127.0.0.1:9090")
		if err != nil {
			t.Fatal(err)
		}
		eds := &v1alpha1.ExtendedDaemonSet{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, eds); err != nil {
			t.Fatal(err)
		}
		agent := eds.Spec.Template.Spec.Containers[0]
		if want := fmt.Sprintf("demo-agent:v%d", v.Number); agent.Image != want {
			t.Errorf("image %s, want %s", agent.Image, want)
		}
		if got := errorRateOf(eds.Spec.Template.Spec.Containers); got != v.ErrorRate {
			t.Errorf("v%d: error rate %v, want %v", v.Number, got, v.ErrorRate)
		}
		if got := eds.Spec.Strategy.Canary.Analysis.Provider.Prometheus.Address; got != "http://127.0.0.1:9090" {
			t.Errorf("analysis on %s", got)
		}
	}
}

func TestPodErrorRateIgnoresWhatIsNotAShare(t *testing.T) {
	for value, want := range map[string]float64{"0.3": 0.3, "1": 1, "": 0, "NaN": 0, "-0.1": 0, "2": 0, "lots": 0} {
		containers := []corev1.Container{
			{Name: "sidecar"}, {Name: "agent", Env: []corev1.EnvVar{{Name: errorRateEnv, Value: value}}},
		}
		if got := errorRateOf(containers); got != want {
			t.Errorf("ERROR_RATE=%q: %v, want %v", value, got, want)
		}
	}
}
