package chaos

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
)

// FaultKind names a fault the proxy answers a request with.
type FaultKind string

// The faults, each one a way a real API server or the network between it
// and a client fails.
const (
	// ServerError is a 500, as when etcd fails a request.
	ServerError FaultKind = "500 internal error"
	// Throttled is a 429 with Retry-After, as API Priority and Fairness
	// answers when a priority level is full; client-go waits and retries.
	Throttled FaultKind = "429 throttled"
	// Conflict is a 409 on a write, as when another writer won the race.
	Conflict FaultKind = "409 conflict"
	// Timeout holds the request, never forwarded, then answers 504.
	Timeout FaultKind = "504 timeout"
	// LostResponse forwards a write, which the API server carries out,
	// then closes the connection without an answer: the client cannot
	// tell whether it happened.
	LostResponse FaultKind = "write done, connection lost"
	// LateTimeout forwards a write, which the API server carries out, then
	// answers 504, as an API server whose handler timed out while its
	// storage went on.
	LateTimeout FaultKind = "write done, 504 timeout"
)

// AllFaults are the kinds a proxy injects unless told otherwise.
var AllFaults = []FaultKind{ServerError, Throttled, Conflict, Timeout, LostResponse, LateTimeout}

// writeOnly are the kinds that only make sense for a write.
var writeOnly = []FaultKind{Conflict, LostResponse, LateTimeout}

// ProxyOptions configures StartFaultProxy.
type ProxyOptions struct {
	// Upstream is the API server: its Host and CA are used, never its
	// credentials, since every request carries the client's own.
	Upstream *rest.Config
	// Rate is the share of requests, 0 to 1, answered with a fault.
	Rate float64
	// Kinds are the faults drawn from, uniformly among those that fit the
	// request; empty means AllFaults.
	Kinds []FaultKind
	// Seed makes the draws repeatable for one sequence of requests.
	Seed uint64
	// MaxHold bounds how long a timeout holds a request; 2s when zero.
	MaxHold time.Duration
}

// ProxyStats are what a proxy saw.
type ProxyStats struct {
	Requests int
	Faults   map[FaultKind]int
	// Forbidden are the requests the API server refused with 403, as
	// "VERB path".
	Forbidden []string
	// Lost are the writes the API server carried out whose answer the
	// client never got, as "VERB path: status".
	Lost []string
}

// FaultProxy is a reverse proxy to an API server that answers a share of
// the requests with faults. It forwards each client's Authorization
// header, so the API server authenticates and authorizes the client, not
// the proxy. It serves TLS, with a certificate of its own, because a
// kubeconfig gives no credentials to a plain HTTP server.
type FaultProxy struct {
	// URL is where clients reach the proxy, and CAData the certificate
	// they trust it with.
	URL    string
	CAData []byte

	opts   ProxyOptions
	proxy  *httputil.ReverseProxy
	server *http.Server

	mu        sync.Mutex
	rng       *rand.Rand
	rate      float64
	requests  int
	faults    map[FaultKind]int
	forbidden []string
	lost      []string
	watchLag  time.Duration
}

// StartFaultProxy starts a proxy on a free loopback port.
func StartFaultProxy(opts ProxyOptions) (*FaultProxy, error) {
	upstream, err := url.Parse(opts.Upstream.Host)
	if err != nil {
		return nil, fmt.Errorf("parsing the API server address: %w", err)
	}
	// No credentials: the transport only knows how to trust the server.
	transport, err := rest.TransportFor(&rest.Config{Host: opts.Upstream.Host, TLSClientConfig: rest.TLSClientConfig{
		CAData: opts.Upstream.CAData, CAFile: opts.Upstream.CAFile, ServerName: opts.Upstream.ServerName,
	}})
	if err != nil {
		return nil, fmt.Errorf("building the transport to the API server: %w", err)
	}
	if len(opts.Kinds) == 0 {
		opts.Kinds = AllFaults
	}
	if opts.MaxHold == 0 {
		opts.MaxHold = 2 * time.Second
	}
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
	if err != nil {
		return nil, fmt.Errorf("generating the proxy's certificate: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("loading the proxy's certificate: %w", err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening: %w", err)
	}
	p := &FaultProxy{
		URL:    "https://" + listener.Addr().String(),
		CAData: certPEM,
		opts:   opts,
		rng:    rand.New(rand.NewPCG(opts.Seed, opts.Seed)), //nolint:gosec // repeatable draws, not secrets
		rate:   opts.Rate,
		faults: map[FaultKind]int{},
	}
	p.proxy = &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(upstream) },
		Transport: transport,
		// Watches are streams: every event goes to the client at once.
		FlushInterval:  -1,
		ModifyResponse: p.noteForbidden,
	}
	p.server = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
	}
	go func() { _ = p.server.ServeTLS(listener, "", "") }()
	return p, nil
}

// Config is how to reach the proxy, without credentials.
func (p *FaultProxy) Config() *rest.Config {
	return &rest.Config{Host: p.URL, TLSClientConfig: rest.TLSClientConfig{CAData: p.CAData}}
}

// SetRate changes the share of requests answered with a fault.
func (p *FaultProxy) SetRate(rate float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rate = rate
}

// Stats returns what the proxy saw so far.
func (p *FaultProxy) Stats() ProxyStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return ProxyStats{Requests: p.requests, Faults: maps.Clone(p.faults), Forbidden: slices.Clone(p.forbidden), Lost: slices.Clone(p.lost)}
}

// Close stops the proxy and drops its open connections, watches included.
func (p *FaultProxy) Close() error {
	if err := p.server.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// ServeHTTP forwards r, or answers it with the fault drawn for it.
func (p *FaultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	kind, hold := p.draw(r)
	switch kind {
	case "":
		if isWatch(r) {
			p.streamWatch(w, r)
			return
		}
		p.proxy.ServeHTTP(w, r)
	case ServerError:
		writeStatus(w, apierrors.NewInternalError(errors.New("fault injected by the chaos proxy")))
	case Throttled:
		w.Header().Set("Retry-After", "1")
		writeStatus(w, apierrors.NewTooManyRequests("fault injected by the chaos proxy", 1))
	case Conflict:
		writeStatus(w, apierrors.NewConflict(schema.GroupResource{}, "", errors.New("fault injected by the chaos proxy")))
	case Timeout:
		holdOn(r, hold)
		writeStatus(w, apierrors.NewTimeoutError("fault injected by the chaos proxy", 0))
	case LostResponse:
		p.forward(r)
		// At once, as a connection reset comes: the client may learn of
		// its failure before its watches learn of the write. The
		// connection (HTTP/1) or the stream (HTTP/2) closes with no answer.
		panic(http.ErrAbortHandler)
	case LateTimeout:
		p.forward(r)
		holdOn(r, hold)
		writeStatus(w, apierrors.NewTimeoutError("fault injected by the chaos proxy after the write was done", 0))
	}
}

// forward carries out r on the API server and drops the answer. The
// request's context is detached from the client's: a client that gives
// up first must not cancel the write.
func (p *FaultProxy) forward(r *http.Request) {
	answer := &discard{header: http.Header{}, code: http.StatusOK}
	p.proxy.ServeHTTP(answer, r.WithContext(context.WithoutCancel(r.Context())))
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lost = append(p.lost, fmt.Sprintf("%s %s: %d", r.Method, r.URL.Path, answer.code))
}

// draw decides whether r gets a fault, which, and how long it holds.
func (p *FaultProxy) draw(r *http.Request) (FaultKind, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests++
	if p.rate <= 0 || p.rng.Float64() >= p.rate {
		return "", 0
	}
	kinds := p.opts.Kinds
	if !isWrite(r) {
		kinds = slices.DeleteFunc(slices.Clone(kinds), func(k FaultKind) bool { return slices.Contains(writeOnly, k) })
	}
	if len(kinds) == 0 {
		return "", 0
	}
	kind := kinds[p.rng.IntN(len(kinds))]
	p.faults[kind]++
	return kind, time.Duration(p.rng.Int64N(int64(p.opts.MaxHold)))
}

// holdOn holds r for d, or until the client gives up.
func holdOn(r *http.Request, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}

func (p *FaultProxy) noteForbidden(resp *http.Response) error {
	if resp.StatusCode == http.StatusForbidden {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.forbidden = append(p.forbidden, resp.Request.Method+" "+resp.Request.URL.RequestURI())
	}
	return nil
}

func isWrite(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// writeStatus answers with err's Status, as the API server encodes it, so
// that client-go decodes the same error a real failure would give.
func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	status := err.Status()
	status.APIVersion, status.Kind = "v1", "Status"
	body, _ := json.Marshal(&status)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(status.Code))
	_, _ = w.Write(body)
}

// discard is where a write's answer goes when the client must not see it.
type discard struct {
	header http.Header
	code   int
}

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(code int)        { d.code = code }
