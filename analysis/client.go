package analysis

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

const (
	// DefaultTimeout bounds one query when the provider does not say.
	DefaultTimeout = 10 * time.Second
	// MaxTimeout bounds one query whatever the provider says: a query runs
	// within a reconcile, and a worker waiting minutes on one Prometheus
	// holds up every other ExtendedDaemonSet it would have reconciled.
	MaxTimeout = 30 * time.Second
)

// Keys of the credentials Secret.
const (
	SecretKeyToken    = "token"
	SecretKeyUsername = "username"
	SecretKeyPassword = "password"
	SecretKeyCA       = "ca.crt"
)

// Querier is the part of the Prometheus query API that a measurement uses:
// promv1.API's Query without its separate informational notes, which the
// Querier from NewQuerier folds into the warnings. Tests stand in for
// Prometheus by implementing it.
type Querier interface {
	// Query evaluates an instant query at ts.
	Query(ctx context.Context, query string, ts time.Time, opts ...promv1.Option) (model.Value, promv1.Warnings, error)
}

// Credentials authenticate to Prometheus: a bearer token or basic auth, and
// a PEM CA bundle to verify its certificate.
type Credentials struct {
	BearerToken, Username, Password string
	CA                              []byte
}

// CredentialsFromSecret reads the keys "token", or "username" and
// "password", and optionally "ca.crt" of a Secret's data. Other keys are
// ignored.
func CredentialsFromSecret(data map[string][]byte) (Credentials, error) {
	// A trailing newline is what `echo token > file` leaves behind; it is
	// never part of a credential and would make an invalid header.
	value := func(key string) (string, bool) {
		v, ok := data[key]
		return strings.TrimRight(string(v), "\r\n"), ok
	}
	token, hasToken := value(SecretKeyToken)
	username, hasUsername := value(SecretKeyUsername)
	password, hasPassword := value(SecretKeyPassword)

	switch {
	case hasToken && (hasUsername || hasPassword):
		return Credentials{}, fmt.Errorf("secret has both %q and %q/%q: use a bearer token or basic auth, not both",
			SecretKeyToken, SecretKeyUsername, SecretKeyPassword)
	case hasUsername != hasPassword:
		return Credentials{}, fmt.Errorf("basic auth needs both %q and %q in the secret", SecretKeyUsername, SecretKeyPassword)
	case hasToken && token == "":
		return Credentials{}, fmt.Errorf("secret key %q is empty", SecretKeyToken)
	case hasUsername && username == "":
		return Credentials{}, fmt.Errorf("secret key %q is empty", SecretKeyUsername)
	}

	c := Credentials{BearerToken: token, Username: username, Password: password}
	if ca, ok := data[SecretKeyCA]; ok {
		if !x509.NewCertPool().AppendCertsFromPEM(ca) {
			return Credentials{}, fmt.Errorf("secret key %q holds no PEM certificate", SecretKeyCA)
		}
		c.CA = ca
	}
	return c, nil
}

// NewQuerier returns a Querier for the provider: TLS verified against the
// system roots plus the credentials' CA (unless InsecureSkipVerify), the
// bearer token or basic auth on every request to the provider's host, and
// the provider's timeout (default DefaultTimeout, at most MaxTimeout) on
// every query, which Prometheus is told too so that it stops evaluating.
// Each call makes a new HTTP transport: a controller, which measures on
// every reconcile, gets its clients from Queriers to reuse connections.
func NewQuerier(p v1alpha1.PrometheusProvider, c Credentials) (Querier, error) {
	q, err := newPromQuerier(p, c)
	if err != nil {
		// Not q: a nil *promQuerier would be a Querier that is not nil.
		return nil, err
	}
	return q, nil
}

func newPromQuerier(p v1alpha1.PrometheusProvider, c Credentials) (*promQuerier, error) {
	address, err := url.Parse(p.Address)
	if err != nil {
		return nil, fmt.Errorf("prometheus address %q: %w", p.Address, err)
	}
	if (address.Scheme != "http" && address.Scheme != "https") || address.Host == "" {
		return nil, fmt.Errorf("prometheus address %q must be an http or https URL with a host", p.Address)
	}

	tlsConfig, err := newTLSConfig(c.CA, p.InsecureSkipVerify)
	if err != nil {
		return nil, err
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tlsConfig

	client, err := api.NewClient(api.Config{
		Address:      p.Address,
		RoundTripper: &authRoundTripper{host: address.Host, credentials: c, next: transport},
	})
	if err != nil {
		return nil, fmt.Errorf("prometheus client for %q: %w", p.Address, err)
	}

	return &promQuerier{api: promv1.NewAPI(client), timeout: timeoutOf(p), transport: transport}, nil
}

// timeoutOf is the provider's timeout, or the default, capped at MaxTimeout.
func timeoutOf(p v1alpha1.PrometheusProvider) time.Duration {
	if p.Timeout == nil || p.Timeout.Duration <= 0 {
		return DefaultTimeout
	}
	return min(p.Timeout.Duration, MaxTimeout)
}

func newTLSConfig(ca []byte, insecureSkipVerify bool) (*tls.Config, error) {
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The user asked for it in the spec, for a Prometheus behind a
		// self-signed certificate they cannot hand us.
		InsecureSkipVerify: insecureSkipVerify,
	}
	if len(ca) == 0 {
		return cfg, nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New("the CA bundle holds no PEM certificate")
	}
	cfg.RootCAs = pool
	return cfg, nil
}

// authRoundTripper adds the credentials to requests for the provider's host
// only, so a redirect elsewhere never carries them.
type authRoundTripper struct {
	host        string
	credentials Credentials
	next        http.RoundTripper
}

func (rt *authRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	c := rt.credentials
	if req.URL.Host != rt.host || (c.BearerToken == "" && c.Username == "") {
		return rt.next.RoundTrip(req)
	}
	// A RoundTripper must not modify the caller's request.
	req = req.Clone(req.Context())
	if c.BearerToken != "" {
		req.Header.Set("Authorization", "Bearer "+c.BearerToken)
	} else {
		req.SetBasicAuth(c.Username, c.Password)
	}
	return rt.next.RoundTrip(req)
}

// promQuerier bounds each query by the provider's timeout and folds the
// API's informational notes into its warnings, which end up in the
// measurement's message.
type promQuerier struct {
	api     promv1.API
	timeout time.Duration
	// transport pools the connections, closed when Queriers evicts them.
	transport *http.Transport
}

func (q *promQuerier) Query(ctx context.Context, query string, ts time.Time, opts ...promv1.Option) (model.Value, promv1.Warnings, error) {
	queryCtx, cancel := context.WithTimeout(ctx, q.timeout)
	defer cancel()
	opts = append([]promv1.Option{promv1.WithTimeout(q.timeout)}, opts...)
	value, warnings, infos, err := q.api.Query(queryCtx, query, ts, opts...)
	for _, info := range infos {
		warnings = append(warnings, "info: "+info)
	}
	if err != nil && ctx.Err() == nil && errors.Is(queryCtx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within the provider timeout of %s: %w", q.timeout, err)
	}
	return value, warnings, err
}
