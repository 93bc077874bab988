package main

import "crypto/tls"

// insecureTLS accepts the manager's self-signed serving certificate.
func insecureTLS() *tls.Config {
	return &tls.Config{InsecureSkipVerify: true} //nolint:gosec // test against a self-signed local server
}
