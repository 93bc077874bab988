package web

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// receiver is a local HTTP server standing in for a user's endpoint: it
// answers each request with the next of its codes (the last one repeats)
// and records what it got.
type receiver struct {
	t      *testing.T
	server *httptest.Server

	mu       sync.Mutex
	codes    []int
	requests []*http.Request
	bodies   [][]byte
	times    []time.Time
}

func newReceiver(t *testing.T, codes ...int) *receiver {
	r := &receiver{t: t, codes: codes}
	r.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		n := len(r.requests)
		r.requests = append(r.requests, req)
		r.bodies = append(r.bodies, body)
		r.times = append(r.times, time.Now())
		code := r.codes[min(n, len(r.codes)-1)]
		r.mu.Unlock()
		w.WriteHeader(code)
		_, _ = io.WriteString(w, `{"value": 1}`)
	}))
	t.Cleanup(r.server.Close)
	return r
}

func (r *receiver) hits() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.requests)
}

// localClient is a Client allowed to reach the local receivers, with a
// short backoff.
func localClient(t *testing.T) *Client {
	c := NewClient(mustPolicy(t, "127.0.0.1"))
	c.backoff = 10 * time.Millisecond
	return c
}

func TestDoSendsTheRequestSignedWithItsDeliveryID(t *testing.T) {
	r := newReceiver(t, http.StatusOK)
	body := []byte(`{"phase":"Failed"}`)
	resp, err := localClient(t).Do(context.Background(), Request{
		Method: http.MethodPost, URL: r.server.URL + "/hook?x=1", Body: body,
		Header:     http.Header{"Authorization": {"Bearer t0k3n"}, "Content-Type": {"application/json"}},
		SigningKey: []byte("s3cr3t"), DeliveryID: "d-1",
	})
	if err != nil || resp.StatusCode != http.StatusOK || string(resp.Body) != `{"value": 1}` || !resp.OK() {
		t.Fatalf("got %+v, %v", resp, err)
	}
	got := r.requests[0]
	switch {
	case got.Method != http.MethodPost || got.URL.RequestURI() != "/hook?x=1":
		t.Errorf("sent %s %s", got.Method, got.URL)
	case string(r.bodies[0]) != string(body):
		t.Errorf("sent body %q", r.bodies[0])
	case !Verify([]byte("s3cr3t"), r.bodies[0], got.Header.Get(SignatureHeader)):
		t.Errorf("signature %q does not verify", got.Header.Get(SignatureHeader))
	case got.Header.Get(DeliveryHeader) != "d-1":
		t.Errorf("delivery header %q", got.Header.Get(DeliveryHeader))
	case got.Header.Get("Authorization") != "Bearer t0k3n" || got.Header.Get("User-Agent") != "extendeddaemonset":
		t.Errorf("headers %v", got.Header)
	}
}

func TestDoRetriesConnectionErrors429And5xxWithBackoff(t *testing.T) {
	cases := []struct {
		name     string
		codes    []int
		retries  int
		wantCode int
		wantHits int
	}{
		{"503 then 200", []int{503, 503, 200}, 2, 200, 3},
		{"always 500", []int{500}, 3, 500, 4},
		{"429 then 204", []int{429, 204}, 2, 204, 2},
		{"404 is not retried", []int{404, 200}, 2, 404, 1},
		{"302 is not retried", []int{302, 200}, 2, 302, 1},
		{"no retries", []int{503, 200}, 0, 503, 1},
		{"retries above the maximum", []int{503}, 9, 503, MaxRetries + 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newReceiver(t, c.codes...)
			resp, err := localClient(t).Do(context.Background(), Request{URL: r.server.URL, Retries: c.retries, DeliveryID: "d-2"})
			if err != nil || resp.StatusCode != c.wantCode || r.hits() != c.wantHits {
				t.Fatalf("got %d, %v after %d requests; want %d after %d", resp.StatusCode, err, r.hits(), c.wantCode, c.wantHits)
			}
			for i, req := range r.requests {
				if req.Header.Get(DeliveryHeader) != "d-2" {
					t.Errorf("attempt %d: delivery header %q", i+1, req.Header.Get(DeliveryHeader))
				}
			}
		})
	}
}

// Each retry waits twice as long as the one before.
func TestDoBacksOffExponentially(t *testing.T) {
	r := newReceiver(t, 503)
	c := localClient(t)
	c.backoff = 40 * time.Millisecond
	if _, err := c.Do(context.Background(), Request{URL: r.server.URL, Retries: 3}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []time.Duration{40 * time.Millisecond, 80 * time.Millisecond, 160 * time.Millisecond} {
		if gap := r.times[i+1].Sub(r.times[i]); gap < want {
			t.Errorf("wait before retry %d: %s, want at least %s", i+1, gap, want)
		}
	}
}

func TestDoHonoursRetryAfter(t *testing.T) {
	var hits []time.Time
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits = append(hits, time.Now())
		if len(hits) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer server.Close()
	resp, err := localClient(t).Do(context.Background(), Request{URL: server.URL, Retries: 1})
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("got %+v, %v", resp, err)
	}
	if gap := hits[1].Sub(hits[0]); gap < time.Second {
		t.Errorf("retried after %s, Retry-After asked for 1s", gap)
	}
}

func TestDoRetriesARefusedConnectionAndNamesNoURL(t *testing.T) {
	server := httptest.NewServer(http.NotFoundHandler())
	url := server.URL + "/T000/B000/s3cr3t-token"
	server.Close()
	c := localClient(t)
	c.backoff = 50 * time.Millisecond
	start := time.Now()
	_, err := c.Do(context.Background(), Request{URL: url, Retries: 2})
	if err == nil {
		t.Fatal("no error from a closed port")
	}
	if elapsed := time.Since(start); elapsed < 150*time.Millisecond {
		t.Errorf("gave up after %s: the two retries should have waited 50ms and 100ms", elapsed)
	}
	if Reason(err, 0) != "connection refused" || !strings.Contains(err.Error(), "attempt 3 of 3") || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("error %q (reason %q)", err, Reason(err, 0))
	}
}

// A receiver that never answers holds each attempt for Timeout, no longer.
func TestDoBoundsAHangingReceiverByTimeout(t *testing.T) {
	cases := map[string]func(release <-chan struct{}) http.HandlerFunc{
		"no answer": func(release <-chan struct{}) http.HandlerFunc {
			return func(http.ResponseWriter, *http.Request) { <-release }
		},
		"no body": func(release <-chan struct{}) http.HandlerFunc {
			return func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				<-release
			}
		},
	}
	for name, handler := range cases {
		t.Run(name, func(t *testing.T) {
			release := make(chan struct{})
			server := httptest.NewServer(handler(release))
			defer server.Close()
			defer close(release)
			start := time.Now()
			_, err := localClient(t).Do(context.Background(), Request{URL: server.URL, Timeout: 100 * time.Millisecond, Retries: 1})
			elapsed := time.Since(start)
			if Reason(err, 0) != "timed out" {
				t.Errorf("got %v (reason %q), want a timeout", err, Reason(err, 0))
			}
			// Two attempts of 100ms and a backoff of 10ms, with room for a
			// busy machine.
			if elapsed < 200*time.Millisecond || elapsed > 2*time.Second {
				t.Errorf("took %s", elapsed)
			}
		})
	}
}

// The caller's context bounds everything, waits between retries included.
func TestDoStopsWhenItsContextEnds(t *testing.T) {
	r := newReceiver(t, 503)
	c := localClient(t)
	c.backoff = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	resp, err := c.Do(ctx, Request{URL: r.server.URL, Retries: 5})
	if err == nil || Reason(err, 0) != "timed out" || resp.StatusCode != 503 || time.Since(start) > 2*time.Second {
		t.Errorf("got %+v, %v after %s", resp, err, time.Since(start))
	}
}

// A context ended with a cause of the caller's is still a timeout.
func TestDoTimesOutWithTheCallersCause(t *testing.T) {
	release := make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer server.Close()
	defer close(release)
	ctx, cancel := context.WithTimeoutCause(context.Background(), 100*time.Millisecond, errors.New("the step's deadline"))
	defer cancel()
	_, err := localClient(t).Do(ctx, Request{URL: server.URL, Retries: 2})
	if Reason(err, 0) != "timed out" {
		t.Errorf("got %v (reason %q)", err, Reason(err, 0))
	}
}

func TestDoReadsAtMostMaxResponseBody(t *testing.T) {
	for _, size := range []int{MaxResponseBody, MaxResponseBody + 1, 10 * MaxResponseBody} {
		server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, strings.Repeat("x", size))
		}))
		resp, err := localClient(t).Do(context.Background(), Request{URL: server.URL})
		server.Close()
		if err != nil || len(resp.Body) != MaxResponseBody || resp.Truncated != (size > MaxResponseBody) {
			t.Errorf("answer of %d bytes: got %d bytes, truncated %v, %v", size, len(resp.Body), resp.Truncated, err)
		}
	}
}

// A redirect is not followed, so it cannot lead anywhere the spec does not
// name.
func TestDoDoesNotFollowRedirects(t *testing.T) {
	target := newReceiver(t, 200)
	server := httptest.NewServer(http.RedirectHandler(target.server.URL, http.StatusFound))
	defer server.Close()
	resp, err := localClient(t).Do(context.Background(), Request{URL: server.URL})
	if err != nil || resp.StatusCode != http.StatusFound || target.hits() != 0 {
		t.Errorf("got %d, %v; the redirect's target got %d requests", resp.StatusCode, err, target.hits())
	}
}

// The default policy refuses the local receiver, the metadata service and
// the API server at dial time, without retrying, with an error that says
// what to do.
func TestDoRefusesHostsThePolicyRefuses(t *testing.T) {
	local := newReceiver(t, 200)
	localhostURL := strings.Replace(local.server.URL, "127.0.0.1", "localhost", 1)
	cases := []struct {
		name    string
		policy  HostPolicy
		url     string
		message string
	}{
		{"loopback", HostPolicy{}, local.server.URL,
			"host 127.0.0.1 is not allowed for webhooks and web metrics: add it to --allowed-webhook-hosts"},
		{"name resolving to loopback", HostPolicy{}, localhostURL, "host localhost resolves to"},
		{"allowed CIDR that does not hold it", mustPolicy(t, "10.0.0.0/8"), local.server.URL, "host 127.0.0.1 is not allowed"},
		{"metadata", mustPolicy(t, "127.0.0.1"), "http://169.254.169.254/latest/meta-data/", "host 169.254.169.254 is not allowed"},
		{"API server address", HostPolicy{APIServer: "https://192.0.2.10:6443"}, "https://192.0.2.10:6443/api", "host 192.0.2.10 is not allowed"},
		{"API server name", HostPolicy{APIServer: "https://api.cluster.test:6443"}, "https://api.cluster.test/", "host api.cluster.test is not allowed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			client := NewClient(c.policy)
			client.backoff = time.Hour
			_, err := client.Do(context.Background(), Request{URL: c.url, Retries: 3, Timeout: time.Second})
			var notAllowed *HostNotAllowedError
			if !errors.As(err, &notAllowed) || !strings.Contains(err.Error(), c.message) || Reason(err, 0) != "host not allowed" {
				t.Fatalf("got %v, want %q", err, c.message)
			}
		})
	}
	if local.hits() != 0 {
		t.Errorf("the refused receiver got %d requests", local.hits())
	}
}

// A name the policy allows reaches a refused address, and a name that the
// API server's host resolves to is refused.
func TestDoAllowsAListedName(t *testing.T) {
	local := newReceiver(t, 200)
	localhostURL := strings.Replace(local.server.URL, "127.0.0.1", "localhost", 1)
	if resp, err := NewClient(mustPolicy(t, "localhost")).Do(context.Background(), Request{URL: localhostURL}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("allowed name: %+v, %v", resp, err)
	}

	c := NewClient(HostPolicy{APIServer: "https://api.cluster.test:6443"})
	c.guard.lookupNet = func(context.Context, string, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("192.0.2.10")}, nil
	}
	_, err := c.Do(context.Background(), Request{URL: "http://192.0.2.10/"})
	if !strings.Contains(err.Error(), "host 192.0.2.10 is not allowed") {
		t.Errorf("an address of the API server: %v", err)
	}
}

func TestDoRefusesWhatIsNotAnHTTPURL(t *testing.T) {
	for _, url := range []string{"", "ftp://host/file", "http:///path", "://s3cr3t"} {
		_, err := localClient(t).Do(context.Background(), Request{URL: url})
		if err == nil || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%q: %v", url, err)
		}
	}
}
