package prometheus

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/onsi/gomega"
)

// The proxy passes requests through; refused, it refuses connections, the
// kept-alive one of a client included, and takes them again on the same
// address; delayed, it answers later than a client waits and never passes
// on a request its client gave up.
func TestFaultProxy(t *testing.T) {
	g := gomega.NewWithT(t)
	var served atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		_, _ = io.WriteString(w, "answer to "+r.URL.Path)
	}))
	t.Cleanup(target.Close)
	proxy, err := StartFaultProxy(target.URL)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	t.Cleanup(func() { _ = proxy.Close() })
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	get := func(ctx context.Context) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, proxy.URL()+"/api/v1/query", nil)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return string(body), err
	}

	g.Expect(get(t.Context())).To(gomega.Equal("answer to /api/v1/query"))

	g.Expect(proxy.Refuse()).To(gomega.Succeed())
	g.Expect(proxy.Refuse()).To(gomega.Succeed())
	_, err = get(t.Context())
	g.Expect(errors.Is(err, syscall.ECONNREFUSED)).To(gomega.BeTrue(), "request to a refusing proxy: %v", err)
	g.Expect(proxy.Accept()).To(gomega.Succeed())
	g.Expect(proxy.Accept()).To(gomega.Succeed())
	g.Expect(get(t.Context())).To(gomega.Equal("answer to /api/v1/query"))

	proxy.Delay(time.Hour)
	before := served.Load()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err = get(ctx)
	g.Expect(errors.Is(err, context.DeadlineExceeded)).To(gomega.BeTrue(), "request held past its deadline: %v", err)
	proxy.Delay(0)
	g.Expect(get(t.Context())).To(gomega.Equal("answer to /api/v1/query"))
	g.Expect(served.Load()).To(gomega.Equal(before+1), "the abandoned request reached the server")
}
