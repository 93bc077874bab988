package chaos

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// fakeAPIServer serves one pod, takes pod creations, streams a watch and
// refuses /api/v1/secrets, to the bearer token "client" only.
type fakeAPIServer struct {
	*httptest.Server
	creates atomic.Int32
}

const clientToken = "client"

func startFakeAPIServer(t *testing.T) *fakeAPIServer {
	t.Helper()
	f := &fakeAPIServer{}
	pod := corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "default"}}
	writeJSON := func(w http.ResponseWriter, code int, obj any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(obj)
	}
	f.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+clientToken {
			writeStatus(w, apierrors.NewUnauthorized("no token"))
			return
		}
		switch {
		case r.URL.Path == "/api/v1/secrets":
			writeStatus(w, apierrors.NewForbidden(corev1.Resource("secrets"), "", nil))
		case r.URL.Query().Get("watch") == "true":
			writeJSON(w, http.StatusOK, metav1.WatchEvent{Type: string(watch.Added)})
			http.NewResponseController(w).Flush()
			// The stream stays open, as a watch does, until the client leaves.
			<-r.Context().Done()
		case r.Method == http.MethodPost:
			f.creates.Add(1)
			writeJSON(w, http.StatusCreated, pod)
		default:
			writeJSON(w, http.StatusOK, pod)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAPIServer) config() *rest.Config {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.Certificate().Raw})
	return &rest.Config{Host: f.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
}

func startProxy(t *testing.T, upstream *fakeAPIServer, opts ProxyOptions) (*FaultProxy, kubernetes.Interface) {
	t.Helper()
	opts.Upstream = upstream.config()
	p, err := StartFaultProxy(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	cfg := p.Config()
	// No client-side rate limit: some tests send hundreds of requests.
	cfg.BearerToken, cfg.QPS = clientToken, -1
	return p, kubernetes.NewForConfigOrDie(cfg)
}

// The manager reads the proxy from a kubeconfig, which must carry its
// token all the way: client-go drops a kubeconfig's credentials for a
// plain HTTP server, and the fake API server refuses requests without.
func TestProxyForwardsTheCredentialsOfAKubeconfig(t *testing.T) {
	g := gomega.NewWithT(t)
	p, _ := startProxy(t, startFakeAPIServer(t), ProxyOptions{})
	cfg := p.Config()
	cfg.BearerToken = clientToken
	path := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(WriteKubeconfig(cfg, path)).To(gomega.Succeed())
	loaded, err := clientcmd.BuildConfigFromFlags("", path)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	pod, err := kubernetes.NewForConfigOrDie(loaded).CoreV1().Pods("default").Get(t.Context(), "agent", metav1.GetOptions{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(pod.Name).To(gomega.Equal("agent"))
	g.Expect(p.Stats()).To(gomega.Equal(ProxyStats{Requests: 1, Faults: map[FaultKind]int{}}))
}

func TestProxyStreamsWatches(t *testing.T) {
	g := gomega.NewWithT(t)
	_, kube := startProxy(t, startFakeAPIServer(t), ProxyOptions{})
	w, err := kube.CoreV1().Pods("").Watch(t.Context(), metav1.ListOptions{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	defer w.Stop()
	// The upstream never ends the stream: the event arrives only if the
	// proxy flushes it as it comes.
	g.Eventually(w.ResultChan()).Should(gomega.Receive())
}

// A lagging watch answers at once, then hands over each event no sooner
// than the lag after the API server sent it.
func TestProxyDelaysWatchEvents(t *testing.T) {
	g := gomega.NewWithT(t)
	p, kube := startProxy(t, startFakeAPIServer(t), ProxyOptions{})
	const lag = 300 * time.Millisecond
	p.SetWatchLag(lag)
	w, err := kube.CoreV1().Pods("").Watch(t.Context(), metav1.ListOptions{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	defer w.Stop()
	opened := time.Now()
	g.Eventually(w.ResultChan()).Should(gomega.Receive())
	// Less a little: the event may have come in just before the answer.
	g.Expect(time.Since(opened)).To(gomega.BeNumerically(">=", lag-50*time.Millisecond))
}

// Each fault reaches client-go as the error a real failure gives, and the
// faults after a write leave the write done.
func TestProxyFaults(t *testing.T) {
	create := func(kube kubernetes.Interface) error {
		_, err := kube.CoreV1().Pods("default").Create(context.Background(), &corev1.Pod{}, metav1.CreateOptions{})
		return err
	}
	get := func(kube kubernetes.Interface) error {
		_, err := kube.CoreV1().Pods("default").Get(context.Background(), "agent", metav1.GetOptions{})
		return err
	}
	for _, tc := range []struct {
		kind    FaultKind
		call    func(kubernetes.Interface) error
		is      func(error) bool
		written int32
	}{
		{ServerError, get, apierrors.IsInternalError, 0},
		{Timeout, get, apierrors.IsTimeout, 0},
		{Conflict, create, apierrors.IsConflict, 0},
		{LateTimeout, create, apierrors.IsTimeout, 1},
		{LostResponse, create, func(err error) bool { return err != nil && apierrors.ReasonForError(err) == metav1.StatusReasonUnknown }, 1},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			g := gomega.NewWithT(t)
			upstream := startFakeAPIServer(t)
			p, kube := startProxy(t, upstream, ProxyOptions{Rate: 1, Kinds: []FaultKind{tc.kind}, MaxHold: 10 * time.Millisecond})
			err := tc.call(kube)
			g.Expect(tc.is(err)).To(gomega.BeTrue(), "error %v", err)
			g.Expect(upstream.creates.Load()).To(gomega.Equal(tc.written), "writes carried out")
			g.Expect(p.Stats().Faults).To(gomega.Equal(map[FaultKind]int{tc.kind: 1}))
			if tc.written > 0 {
				g.Expect(p.Stats().Lost).To(gomega.Equal([]string{"POST /api/v1/namespaces/default/pods: 201"}))
			}
		})
	}
}

// client-go would wait and retry a 429 with Retry-After, which is the
// point of the header; the answer itself is read here.
func TestProxyThrottlesWithRetryAfter(t *testing.T) {
	g := gomega.NewWithT(t)
	p, _ := startProxy(t, startFakeAPIServer(t), ProxyOptions{Rate: 1, Kinds: []FaultKind{Throttled}})
	c, err := rest.HTTPClientFor(p.Config())
	g.Expect(err).NotTo(gomega.HaveOccurred())
	resp, err := c.Get(p.URL + "/api/v1/namespaces/default/pods/agent")
	g.Expect(err).NotTo(gomega.HaveOccurred())
	defer resp.Body.Close()
	g.Expect(resp.StatusCode).To(gomega.Equal(http.StatusTooManyRequests))
	g.Expect(resp.Header.Get("Retry-After")).To(gomega.Equal("1"))
	var status metav1.Status
	g.Expect(json.NewDecoder(resp.Body).Decode(&status)).To(gomega.Succeed())
	g.Expect(status.Reason).To(gomega.Equal(metav1.StatusReasonTooManyRequests))
}

func TestProxyKeepsWriteFaultsToWrites(t *testing.T) {
	g := gomega.NewWithT(t)
	p, kube := startProxy(t, startFakeAPIServer(t), ProxyOptions{Rate: 1, Kinds: []FaultKind{Conflict, LostResponse}})
	_, err := kube.CoreV1().Pods("default").Get(t.Context(), "agent", metav1.GetOptions{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(p.Stats().Faults).To(gomega.BeEmpty())
}

func TestProxyDrawsItsShareRepeatably(t *testing.T) {
	g := gomega.NewWithT(t)
	upstream := startFakeAPIServer(t)
	faulted := func() int {
		p, kube := startProxy(t, upstream, ProxyOptions{Rate: 0.1, Seed: 7, Kinds: []FaultKind{ServerError}})
		for range 500 {
			_, _ = kube.CoreV1().Pods("default").Get(t.Context(), "agent", metav1.GetOptions{})
		}
		return p.Stats().Faults[ServerError]
	}
	n := faulted()
	g.Expect(n).To(gomega.BeNumerically("~", 50, 25))
	g.Expect(faulted()).To(gomega.Equal(n), "same seed, same requests, same faults")
}

func TestProxyRecordsForbiddenRequests(t *testing.T) {
	g := gomega.NewWithT(t)
	p, kube := startProxy(t, startFakeAPIServer(t), ProxyOptions{})
	_, err := kube.CoreV1().Secrets("").List(t.Context(), metav1.ListOptions{})
	g.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "error %v", err)
	g.Expect(p.Stats().Forbidden).To(gomega.ConsistOf(gomega.HavePrefix("GET /api/v1/secrets")))
}
