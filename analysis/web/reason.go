package web

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"syscall"
)

// Reason is a short fixed text for an answer with code (err nil) or for
// err, for status and events: it never holds the answer's body, the URL or
// any other value a user or a receiver chose, so it is safe to show and
// stable enough to aggregate.
func Reason(err error, code int) string {
	if err == nil {
		return fmt.Sprintf("answered %d", code)
	}
	var (
		notAllowed *HostNotAllowedError
		dnsErr     *net.DNSError
		certErr    *tls.CertificateVerificationError
		unknownCA  x509.UnknownAuthorityError
		hostname   x509.HostnameError
		netErr     net.Error
	)
	switch {
	case errors.As(err, &notAllowed):
		return "host not allowed"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection reset"
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return "host not found"
		}
		return "name resolution failed"
	case errors.As(err, &certErr), errors.As(err, &unknownCA), errors.As(err, &hostname):
		return "certificate not trusted"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "host unreachable"
	default:
		return "request failed"
	}
}
