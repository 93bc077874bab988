package analysis

import (
	"context"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// connCounter is a Prometheus stand-in that counts the connections opened
// to it and closed.
type connCounter struct {
	server         *httptest.Server
	opened, closed atomic.Int32
}

func newConnCounter(t *testing.T) *connCounter {
	c := &connCounter{}
	c.server = httptest.NewUnstartedServer(respond(http.StatusOK, vectorBody))
	c.server.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		switch state {
		case http.StateNew:
			c.opened.Add(1)
		case http.StateClosed:
			c.closed.Add(1)
		}
	}
	c.server.Start()
	t.Cleanup(c.server.Close)
	return c
}

func (c *connCounter) provider() v1alpha1.PrometheusProvider {
	return v1alpha1.PrometheusProvider{Address: c.server.URL}
}

func mustGet(t *testing.T, qs *Queriers, p v1alpha1.PrometheusProvider, c Credentials) Querier {
	t.Helper()
	q, err := qs.Get(p, c)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// Reconciles of the same provider share one client and so its pooled
// connections, instead of a new transport and connection each time.
func TestQueriersReuseConnections(t *testing.T) {
	prometheus := newConnCounter(t)
	var qs Queriers
	for range 5 {
		q := mustGet(t, &qs, prometheus.provider(), Credentials{BearerToken: "t"})
		if _, _, err := q.Query(context.Background(), "up", t0); err != nil {
			t.Fatal(err)
		}
	}
	if opened := prometheus.opened.Load(); opened != 1 {
		t.Errorf("5 reconciles opened %d connections, want 1", opened)
	}
}

// Whatever changes the client makes another one: the address, the timeout,
// TLS verification, the credentials and the CA.
func TestQueriersKeyOnEverythingTheClientUses(t *testing.T) {
	tlsServer := httptest.NewTLSServer(http.NotFoundHandler())
	defer tlsServer.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsServer.Certificate().Raw})

	base := v1alpha1.PrometheusProvider{Address: "http://prometheus:9090"}
	withAddress, withTimeout, insecure := base, base, base
	withAddress.Address = "http://prometheus:9091"
	withTimeout.Timeout = &metav1.Duration{Duration: time.Second}
	insecure.InsecureSkipVerify = true
	variants := []struct {
		p v1alpha1.PrometheusProvider
		c Credentials
	}{
		{base, Credentials{}},
		{withAddress, Credentials{}},
		{withTimeout, Credentials{}},
		{insecure, Credentials{}},
		{base, Credentials{BearerToken: "a"}},
		{base, Credentials{BearerToken: "b"}},
		{base, Credentials{Username: "a", Password: "b"}},
		{base, Credentials{Username: "ab", Password: ""}},
		{base, Credentials{CA: ca}},
	}
	var qs Queriers
	seen := map[Querier]int{}
	for i, v := range variants {
		q := mustGet(t, &qs, v.p, v.c)
		if j, ok := seen[q]; ok {
			t.Errorf("variants %d and %d share a client", j, i)
		}
		seen[q] = i
		if again := mustGet(t, &qs, v.p, v.c); again != q {
			t.Errorf("variant %d got a second client", i)
		}
	}

	// Timeouts past MaxTimeout make the same client.
	long, longer := base, base
	long.Timeout = &metav1.Duration{Duration: time.Hour}
	longer.Timeout = &metav1.Duration{Duration: 2 * time.Hour}
	if mustGet(t, &qs, long, Credentials{}) != mustGet(t, &qs, longer, Credentials{}) {
		t.Error("two timeouts capped to the same one made two clients")
	}
}

func TestQueriersDoNotKeepFailures(t *testing.T) {
	var qs Queriers
	for range 2 {
		if _, err := qs.Get(v1alpha1.PrometheusProvider{Address: "prometheus:9090"}, Credentials{}); err == nil {
			t.Fatal("a bad address made a client")
		}
	}
	if n := qs.len(); n != 0 {
		t.Errorf("%d clients kept", n)
	}
}

// The cache keeps at most maxQueriers clients, evicting the least recently
// used, whose idle connections are closed rather than left open.
func TestQueriersAreBounded(t *testing.T) {
	evicted, kept := newConnCounter(t), newConnCounter(t)
	var qs Queriers
	first := mustGet(t, &qs, evicted.provider(), Credentials{})
	if _, _, err := first.Query(context.Background(), "up", t0); err != nil {
		t.Fatal(err)
	}
	recent := mustGet(t, &qs, kept.provider(), Credentials{})
	if _, _, err := recent.Query(context.Background(), "up", t0); err != nil {
		t.Fatal(err)
	}
	for i := range maxQueriers - 1 {
		if i == maxQueriers/2 {
			mustGet(t, &qs, kept.provider(), Credentials{})
		}
		mustGet(t, &qs, v1alpha1.PrometheusProvider{Address: fmt.Sprintf("http://prometheus-%d:9090", i)}, Credentials{})
	}
	if n := qs.len(); n != maxQueriers {
		t.Errorf("%d clients kept, want %d", n, maxQueriers)
	}
	if mustGet(t, &qs, kept.provider(), Credentials{}) != recent {
		t.Error("a client in use was evicted")
	}
	deadline := time.Now().Add(5 * time.Second)
	for evicted.closed.Load() != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if closed := evicted.closed.Load(); closed != 1 {
		t.Errorf("the evicted client left its connection open: %d closed", closed)
	}
	if closed := kept.closed.Load(); closed != 0 {
		t.Errorf("a kept client lost %d connections", closed)
	}
	if mustGet(t, &qs, evicted.provider(), Credentials{}) == first {
		t.Error("the least recently used client was not evicted")
	}
}

func TestQueriersAreSafeForConcurrentUse(t *testing.T) {
	var qs Queriers
	p := v1alpha1.PrometheusProvider{Address: "http://prometheus:9090"}
	got := make([]Querier, 50)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			q, err := qs.Get(p, Credentials{BearerToken: "t"})
			if err != nil {
				t.Error(err)
			}
			got[i] = q
		})
	}
	wg.Wait()
	for _, q := range got {
		if q != got[0] {
			t.Fatal("concurrent reconciles made two clients for one provider")
		}
	}
}
