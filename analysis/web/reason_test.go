package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestReasonIsShortAndFixed(t *testing.T) {
	cases := []struct {
		err  error
		code int
		want string
	}{
		{nil, 200, "answered 200"},
		{nil, 503, "answered 503"},
		{fmt.Errorf("attempt 1 of 1: %w", &HostNotAllowedError{Host: "10.0.0.1"}), 0, "host not allowed"},
		{fmt.Errorf("attempt 2 of 3: %w", context.DeadlineExceeded), 0, "timed out"},
		{&net.OpError{Op: "dial", Err: &timeoutError{}}, 0, "timed out"},
		{context.Canceled, 0, "canceled"},
		{&net.DNSError{Err: "no such host", Name: "receiver.example", IsNotFound: true}, 0, "host not found"},
		{&net.DNSError{Err: "server misbehaving", Name: "receiver.example"}, 0, "name resolution failed"},
		{errors.New("something else"), 0, "request failed"},
	}
	for _, c := range cases {
		if got := Reason(c.err, c.code); got != c.want {
			t.Errorf("Reason(%v, %d) = %q, want %q", c.err, c.code, got, c.want)
		}
	}
}

type timeoutError struct{}

func (*timeoutError) Error() string   { return "i/o timeout" }
func (*timeoutError) Timeout() bool   { return true }
func (*timeoutError) Temporary() bool { return true }

// A certificate that does not verify is not retried: another attempt
// gets the same certificate.
func TestUntrustedCertificateIsNotRetried(t *testing.T) {
	var hits atomic.Int32
	server := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	// The handshake the client abandons is expected: keep it out of the
	// test's output.
	server.Config.ErrorLog = log.New(io.Discard, "", 0)
	server.StartTLS()
	defer server.Close()
	start := time.Now()
	c := localClient(t)
	c.backoff = time.Second
	_, err := c.Do(context.Background(), Request{URL: server.URL, Retries: 3})
	if Reason(err, 0) != "certificate not trusted" || time.Since(start) > time.Second || hits.Load() != 0 {
		t.Errorf("got %v (reason %q) after %s", err, Reason(err, 0), time.Since(start))
	}
}
