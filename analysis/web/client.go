package web

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"
)

const (
	// MaxResponseBody is how much of an answer is read: enough for the JSON
	// a web metric reads a number from, and the most a receiver can make
	// the controller hold.
	MaxResponseBody = 64 << 10

	// userAgent names the controller to receivers.
	userAgent = "extendeddaemonset"

	// firstBackoff is the wait before the first retry; each retry waits
	// twice as long as the one before, at most maxBackoff.
	firstBackoff = 500 * time.Millisecond
	maxBackoff   = 8 * time.Second
)

// Response is an answer. Body holds at most MaxResponseBody bytes; callers
// read it (a web metric's number) but never copy it into status or events.
type Response struct {
	StatusCode int
	Body       []byte
	// Truncated is true when the answer was longer than Body.
	Truncated bool
}

// OK is true for a 2xx answer.
func (r Response) OK() bool { return r.StatusCode >= 200 && r.StatusCode < 300 }

// Client sends Requests under a HostPolicy. It keeps one pool of
// connections for every request; it is safe for concurrent use.
type Client struct {
	guard *guard
	http  *http.Client
	// backoff is the wait before the first retry; tests shorten it.
	backoff time.Duration
}

// NewClient returns a Client that dials only what policy allows.
func NewClient(policy HostPolicy) *Client {
	c := &Client{guard: newGuard(policy), backoff: firstBackoff}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	// The policy sees the address dialed: through a proxy it would only
	// see the proxy's.
	transport.Proxy = nil
	transport.DialContext = c.dial
	transport.MaxIdleConnsPerHost = 4
	c.http = &http.Client{
		Transport: transport,
		// A redirect is an answer like another: following it would ask a
		// host the spec does not name.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c
}

// dial connects to addr when the policy allows its host and the address it
// resolves to; the address is checked as it is dialed, so neither a DNS
// answer that changes nor a second address of the name gets around it.
func (c *Client) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("address %s: %w", addr, err)
	}
	if err := c.guard.checkHost(host); err != nil {
		return nil, err
	}
	dialer := &net.Dialer{
		Timeout:   MaxTimeout,
		KeepAlive: 30 * time.Second,
		ControlContext: func(ctx context.Context, _, address string, _ syscall.RawConn) error {
			ipPort, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("address %s: %w", address, err)
			}
			return c.guard.checkAddr(ctx, host, ipPort.Addr())
		},
	}
	return dialer.DialContext(ctx, network, addr)
}

// Do sends r, again after a connection error, a 429 or a 5xx, up to
// r.Retries times with exponential backoff (or the answer's Retry-After,
// when longer), each attempt within r.Timeout. An answer, whatever its
// status, is a Response and a nil error; the error is for no answer at
// all. The ctx bounds the whole, backoff included.
func (c *Client) Do(ctx context.Context, r Request) (Response, error) {
	if err := checkURL(r.URL); err != nil {
		return Response{}, fmt.Errorf("url %w", err)
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	timeout = min(timeout, MaxTimeout)
	retries := min(max(r.Retries, 0), MaxRetries)

	wait := c.backoff
	for attempt := 0; ; attempt++ {
		resp, retryAfter, err := c.attempt(ctx, r, timeout)
		if attempt == retries || !retriable(resp, err) || ctx.Err() != nil {
			if err != nil && retries > 0 {
				err = fmt.Errorf("attempt %d of %d: %w", attempt+1, retries+1, err)
			}
			return resp, err
		}
		select {
		case <-ctx.Done():
			return resp, fmt.Errorf("waiting to retry: %w", context.Cause(ctx))
		case <-time.After(max(wait, min(retryAfter, maxBackoff))):
		}
		wait = min(2*wait, maxBackoff)
	}
}

// attempt sends r once within timeout, and reads at most MaxResponseBody of
// the answer. Its error never holds the URL: net/http's does, and a URL
// read from a Secret may hold a token.
func (c *Client) attempt(ctx context.Context, r Request, timeout time.Duration) (Response, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.URL, body)
	if err != nil {
		return Response{}, 0, errors.New("url is not a valid request URL")
	}
	for name, values := range r.Header {
		req.Header[name] = values
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", userAgent)
	}
	if r.SigningKey != nil {
		req.Header.Set(SignatureHeader, Sign(r.SigningKey, r.Body))
	}
	if r.DeliveryID != "" {
		req.Header.Set(DeliveryHeader, r.DeliveryID)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Response{}, 0, ended(ctx, withoutURL(err))
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBody+1))
	out := Response{StatusCode: resp.StatusCode, Body: data}
	if len(data) > MaxResponseBody {
		out.Body, out.Truncated = data[:MaxResponseBody], true
	}
	if err != nil {
		return out, 0, fmt.Errorf("reading the answer %d: %w", resp.StatusCode, ended(ctx, withoutURL(err)))
	}
	return out, retryAfterOf(resp), nil
}

// withoutURL is net/http's error without the *url.Error around it, which
// quotes the URL.
func withoutURL(err error) error {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return urlErr.Err
	}
	return err
}

// ended says that err came of ctx ending, when it did: a context ended
// with a cause makes net/http return the cause alone, which does not tell
// a deadline from a cancellation.
func ended(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("%w: %w", ctxErr, err)
	}
	return err
}

// retriable is true for what another attempt may fix: no answer (but for a
// refused host or a certificate that does not verify), a 429 or a 5xx.
func retriable(resp Response, err error) bool {
	if err != nil {
		var notAllowed *HostNotAllowedError
		var certErr *tls.CertificateVerificationError
		return !errors.As(err, &notAllowed) && !errors.As(err, &certErr)
	}
	return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
}

// retryAfterOf is the wait a 429 or 503 asks for in seconds; zero when it
// asks for none.
func retryAfterOf(resp *http.Response) time.Duration {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return 0
	}
	seconds, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	if err != nil || seconds <= 0 {
		return 0
	}
	return time.Duration(seconds) * time.Second
}
