package prometheus

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onsi/gomega"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/test/exporters/appmetrics"
	"github.com/extendeddaemonset/extendeddaemonset/test/exporters/kubestate"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

const (
	eventually = 30 * time.Second
	poll       = 250 * time.Millisecond
)

// Prometheus scrapes real pod statuses and controlled traffic, answers the
// queries a canary analysis makes, fails while it is down, and keeps its data
// across a restart.
func TestScrapesExportersAndKeepsDataAcrossRestart(t *testing.T) {
	testenv.RequireAssets(t)
	g := gomega.NewWithT(t)
	ctx := t.Context()
	c := startEnvtest(t)

	web := map[string]string{"app": "web"}
	podA, err := createRunningPod(ctx, c, "web-a", web, 1)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	podB, err := createRunningPod(ctx, c, "web-b", web, 0)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	_, err = createRunningPod(ctx, c, "other", map[string]string{"app": "other"}, 5)
	g.Expect(err).NotTo(gomega.HaveOccurred())

	kube, err := kubestate.Start(c, kubestate.Options{Namespace: podA.Namespace, Selector: labels.SelectorFromSet(web)})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	t.Cleanup(func() { _ = kube.Close() })
	app, err := appmetrics.Start(appmetrics.Options{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	t.Cleanup(func() { _ = app.Close() })
	rates := map[string]float64{"web-a/200": 20, "web-a/500": 4, "web-b/200": 10}
	for key, rate := range rates {
		pod, code, _ := strings.Cut(key, "/")
		app.SetRate(podA.Namespace, pod, code, rate)
	}

	srv := startServer(t, Options{Targets: []string{kube.Addr(), app.Addr()}})
	promAPI, err := srv.API()
	g.Expect(err).NotTo(gomega.HaveOccurred())

	restarts := `kube_pod_container_status_restarts_total{namespace="default"}`
	g.Eventually(func(g gomega.Gomega) {
		vec := query(ctx, g, promAPI, restarts, time.Now())
		g.Expect(byLabels(vec, "pod", "uid", "container")).To(gomega.Equal(map[string]float64{
			"web-a/" + string(podA.UID) + "/app": 1,
			"web-b/" + string(podB.UID) + "/app": 0,
		}))
	}).WithTimeout(eventually).WithPolling(poll).Should(gomega.Succeed())

	g.Expect(setRestarts(ctx, c, podA, 3)).To(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		increases := byLabels(query(ctx, g, promAPI, "increase("+restarts+"[1m])", time.Now()), "pod")
		g.Expect(increases).To(gomega.HaveKeyWithValue("web-a", gomega.BeNumerically(">=", 1.999)))
		g.Expect(increases).To(gomega.HaveKeyWithValue("web-b", 0.0))
	}).WithTimeout(eventually).WithPolling(poll).Should(gomega.Succeed())

	g.Eventually(func(g gomega.Gomega) {
		got := byLabels(query(ctx, g, promAPI, "rate(http_requests_total[5s])", time.Now()), "pod", "code")
		g.Expect(got).To(gomega.HaveLen(len(rates)))
		for key, rate := range rates {
			g.Expect(got).To(gomega.HaveKeyWithValue(key, gomega.BeNumerically("~", rate, rate/10)))
		}
	}).WithTimeout(eventually).WithPolling(poll).Should(gomega.Succeed())

	// Every sample up to now has been scraped: the restart count is 3 already.
	beforeStop := time.Now()
	g.Expect(byLabels(query(ctx, g, promAPI, restarts, beforeStop), "pod")).To(gomega.HaveKeyWithValue("web-a", 3.0))

	pid := srv.pid()
	g.Expect(srv.Stop()).To(gomega.Succeed())
	g.Expect(errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)).To(gomega.BeTrue(), "Prometheus (pid %d) is alive after Stop", pid)
	l, err := net.Listen("tcp", srv.Addr())
	g.Expect(err).NotTo(gomega.HaveOccurred(), "port of a stopped Prometheus")
	g.Expect(l.Close()).To(gomega.Succeed())
	_, _, _, err = promAPI.Query(ctx, "up", time.Now())
	g.Expect(err).To(gomega.HaveOccurred(), "query of a stopped Prometheus")

	g.Expect(srv.Start(ctx)).To(gomega.Succeed())
	restarted := time.Now()
	g.Expect(byLabels(query(ctx, g, promAPI, restarts, beforeStop), "pod")).To(gomega.Equal(map[string]float64{"web-a": 3, "web-b": 0}),
		"samples scraped before the restart")
	g.Eventually(func(g gomega.Gomega) {
		scraped := byLabels(query(ctx, g, promAPI, "timestamp("+restarts+")", time.Now()), "pod")
		g.Expect(scraped).To(gomega.HaveKeyWithValue("web-a", gomega.BeNumerically(">", float64(restarted.Unix()))))
	}).WithTimeout(eventually).WithPolling(poll).Should(gomega.Succeed(), "a scrape after the restart")

	dir := srv.Dir()
	g.Expect(srv.Close()).To(gomega.Succeed())
	_, err = os.Stat(dir)
	g.Expect(os.IsNotExist(err)).To(gomega.BeTrue(), "directory %s after Close", dir)
}

func startEnvtest(t *testing.T) client.Client {
	t.Helper()
	env, cfg, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// startServer starts Prometheus, closes it at the end of the test and dumps
// its log if the test failed.
func startServer(t *testing.T, opts Options) *Server {
	t.Helper()
	srv, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			var logs strings.Builder
			srv.DumpLogs(&logs, 40)
			t.Log(logs.String())
		}
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	return srv
}

func query(ctx context.Context, g gomega.Gomega, promAPI v1.API, q string, ts time.Time) model.Vector {
	value, _, _, err := promAPI.Query(ctx, q, ts)
	g.Expect(err).NotTo(gomega.HaveOccurred(), q)
	vec, ok := value.(model.Vector)
	g.Expect(ok).To(gomega.BeTrue(), "%s returned a %s, not a vector", q, value.Type())
	return vec
}

// byLabels keys each sample's value by its values of names, joined by "/".
func byLabels(vec model.Vector, names ...model.LabelName) map[string]float64 {
	m := make(map[string]float64, len(vec))
	for _, s := range vec {
		values := make([]string, len(names))
		for i, n := range names {
			values[i] = string(s.Metric[n])
		}
		m[strings.Join(values, "/")] = float64(s.Value)
	}
	return m
}

// A missing prometheus binary fails Start with the way to build it, never a
// skip.
func TestStartExplainsMissingBinary(t *testing.T) {
	assets := t.TempDir()
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if err := os.WriteFile(filepath.Join(assets, name), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(testenv.AssetsEnv, assets)
	srv, err := Start(t.Context(), Options{})
	if err == nil {
		_ = srv.Close()
		t.Fatal("Start without a prometheus binary succeeded")
	}
	if !strings.Contains(err.Error(), "prometheus") || !strings.Contains(err.Error(), "make testbin") {
		t.Fatalf("Start without a prometheus binary: %v, want an error naming prometheus and make testbin", err)
	}
}
