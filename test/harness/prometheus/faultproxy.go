package prometheus

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"
)

// FaultProxy passes HTTP requests through to a server, Prometheus in the
// tests, and makes the faults the server cannot be made to make on demand:
// refusing connections while the server goes on scraping, and answering
// later than a client waits. Its methods are safe for concurrent use.
type FaultProxy struct {
	addr  string
	proxy *httputil.ReverseProxy

	mu     sync.Mutex
	server *http.Server // nil while refusing
	done   chan error
	delay  time.Duration
}

// StartFaultProxy listens on a free 127.0.0.1 port and passes every
// request to target, a base URL, until told otherwise.
func StartFaultProxy(target string) (*FaultProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("fault proxy target %q: %w", target, err)
	}
	p := &FaultProxy{proxy: httputil.NewSingleHostReverseProxy(u)}
	// The client is told why, as a gateway would, rather than the test's
	// output.
	p.proxy.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, err error) {
		http.Error(w, err.Error(), http.StatusBadGateway)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fault proxy: %w", err)
	}
	p.addr = l.Addr().String()
	p.serve(l)
	return p, nil
}

// URL is the proxy's base URL, the same while it refuses connections.
func (p *FaultProxy) URL() string { return "http://" + p.addr }

// Delay holds every request arriving from now on for d before passing it
// on; zero passes them at once. A request whose client gives up first is
// never passed on, so the server does not work for nobody.
func (p *FaultProxy) Delay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = d
}

// Refuse closes the listener and every connection, kept-alive ones
// included, so that each new request is refused as by a server that is
// down. Safe to call while refusing.
func (p *FaultProxy) Refuse() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.server == nil {
		return nil
	}
	err := p.server.Close()
	if serveErr := <-p.done; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	p.server = nil
	if err != nil {
		return fmt.Errorf("fault proxy on %s: %w", p.addr, err)
	}
	return nil
}

// Accept listens again on the same address after Refuse. Safe to call
// while accepting.
func (p *FaultProxy) Accept() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.server != nil {
		return nil
	}
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		return fmt.Errorf("fault proxy: listening again: %w", err)
	}
	p.serve(l)
	return nil
}

// Close stops the proxy for good.
func (p *FaultProxy) Close() error { return p.Refuse() }

// serve serves on l; the caller holds mu, or is the only one to know p.
func (p *FaultProxy) serve(l net.Listener) {
	p.server = &http.Server{Handler: http.HandlerFunc(p.handle), ReadHeaderTimeout: 10 * time.Second}
	p.done = make(chan error, 1)
	server, done := p.server, p.done
	go func() { done <- server.Serve(l) }()
}

func (p *FaultProxy) handle(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	delay := p.delay
	p.mu.Unlock()
	if delay > 0 {
		timer := time.NewTimer(delay)
		defer timer.Stop()
		select {
		case <-r.Context().Done():
			// Nobody reads the answer; the status is for the log alone.
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		case <-timer.C:
		}
	}
	p.proxy.ServeHTTP(w, r)
}
