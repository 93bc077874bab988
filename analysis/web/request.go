package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

const (
	// DefaultTimeout bounds one attempt when the spec does not say.
	DefaultTimeout = 10 * time.Second
	// MaxTimeout bounds one attempt whatever the spec says: a web metric
	// is measured within a reconcile, as a Prometheus query is.
	MaxTimeout = 30 * time.Second
	// DefaultRetries is how many times a request is sent again when the
	// spec does not say.
	DefaultRetries = 2
	// MaxRetries bounds the retries whatever the spec says.
	MaxRetries = 5
)

// Request is one request to send: what a WebRequest resolves to, plus what
// its caller adds (method, body, delivery id).
type Request struct {
	// Method is GET when empty.
	Method string
	// URL is an http or https URL with a host.
	URL string
	// Header is sent as is, below the headers the client sets.
	Header http.Header
	// Body is sent as is; nil sends none.
	Body []byte
	// SigningKey, when set, signs Body into SignatureHeader.
	SigningKey []byte
	// Timeout bounds each attempt; zero means DefaultTimeout, and it is at
	// most MaxTimeout.
	Timeout time.Duration
	// Retries is how many times the request is sent again after a
	// connection error, a 429 or a 5xx; at most MaxRetries.
	Retries int
	// DeliveryID, when set, is sent in DeliveryHeader on every attempt.
	DeliveryID string
}

// reservedHeaders are set by the client; a Secret of headers may not
// replace them.
var reservedHeaders = map[string]bool{
	"Host":              true,
	"Content-Length":    true,
	"Transfer-Encoding": true,
	"Connection":        true,
	SignatureHeader:     true,
	DeliveryHeader:      true,
}

// Resolve turns a WebRequest of an ExtendedDaemonSet in namespace into a
// Request, reading the Secrets it names with c (which is not used when it
// names none). Its errors name the Secret, the key and the field, never a
// value read from the Secret.
func Resolve(ctx context.Context, c client.Reader, namespace string, spec *v1alpha1.WebRequest) (Request, error) {
	if spec == nil {
		return Request{}, errors.New("no request")
	}
	secrets := secretReader{ctx: ctx, reader: c, namespace: namespace, read: map[string]*corev1.Secret{}}
	r := Request{
		URL:     spec.URL,
		Timeout: DefaultTimeout,
		Retries: DefaultRetries,
	}
	if spec.RequestTimeout != nil {
		r.Timeout = spec.RequestTimeout.Duration
	}
	if spec.Retries != nil {
		r.Retries = int(*spec.Retries)
	}
	switch {
	case spec.URL != "" && spec.URLFrom != nil:
		return Request{}, errors.New("both url and urlFrom are set: use one")
	case spec.URLFrom != nil:
		value, err := secrets.key("urlFrom", spec.URLFrom)
		if err != nil {
			return Request{}, err
		}
		r.URL = strings.TrimSpace(string(value))
		if err := checkURL(r.URL); err != nil {
			return Request{}, fmt.Errorf("urlFrom: the value of key %q of Secret %s %w", spec.URLFrom.Key, secrets.name(spec.URLFrom.Name), err)
		}
	case spec.URL == "":
		return Request{}, errors.New("neither url nor urlFrom is set")
	default:
		if err := checkURL(r.URL); err != nil {
			return Request{}, fmt.Errorf("url %w", err)
		}
	}
	if spec.HeadersFrom != nil {
		header, err := secrets.headers(spec.HeadersFrom.Name)
		if err != nil {
			return Request{}, err
		}
		r.Header = header
	}
	if sel := spec.SigningKeyFrom; sel != nil {
		key, err := secrets.key("signingKeyFrom", sel)
		var missing *missingError
		switch {
		case errors.As(err, &missing) && sel.Optional != nil && *sel.Optional:
			return r, nil
		case err != nil:
			return Request{}, err
		}
		if len(key) == 0 {
			return Request{}, fmt.Errorf("signingKeyFrom: key %q of Secret %s is empty", spec.SigningKeyFrom.Key, secrets.name(spec.SigningKeyFrom.Name))
		}
		r.SigningKey = key
	}
	return r, nil
}

// checkURL says what is wrong with a URL without quoting it: it may come
// from a Secret, and a token in its path or query must stay there. The
// error reads after "url ".
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return errors.New("is not a valid URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("is not an http or https URL")
	case u.Hostname() == "":
		return errors.New("has no host")
	}
	return nil
}

// missingError is a Secret or a key that does not exist.
type missingError struct{ message string }

func (e *missingError) Error() string { return e.message }

// secretReader reads each Secret of one Resolve once.
type secretReader struct {
	ctx       context.Context
	reader    client.Reader
	namespace string
	read      map[string]*corev1.Secret
}

func (s secretReader) name(name string) string {
	return types.NamespacedName{Namespace: s.namespace, Name: name}.String()
}

func (s secretReader) get(field, name string) (*corev1.Secret, error) {
	if name == "" {
		return nil, fmt.Errorf("%s: no Secret named", field)
	}
	if secret, ok := s.read[name]; ok {
		return secret, nil
	}
	if s.reader == nil {
		return nil, fmt.Errorf("%s: no client to read Secret %s", field, s.name(name))
	}
	secret := &corev1.Secret{}
	if err := s.reader.Get(s.ctx, types.NamespacedName{Namespace: s.namespace, Name: name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &missingError{fmt.Sprintf("%s: Secret %s not found", field, s.name(name))}
		}
		return nil, fmt.Errorf("%s: reading Secret %s: %w", field, s.name(name), err)
	}
	s.read[name] = secret
	return secret, nil
}

// key is the value of one key of a Secret, without the trailing newline
// that `echo value > file` leaves.
func (s secretReader) key(field string, sel *corev1.SecretKeySelector) ([]byte, error) {
	secret, err := s.get(field, sel.Name)
	if err != nil {
		return nil, err
	}
	value, ok := secret.Data[sel.Key]
	if !ok {
		return nil, &missingError{fmt.Sprintf("%s: Secret %s has no key %q", field, s.name(sel.Name), sel.Key)}
	}
	return []byte(strings.TrimRight(string(value), "\r\n")), nil
}

// headers reads a Secret whose keys are header names and values their
// values.
func (s secretReader) headers(name string) (http.Header, error) {
	secret, err := s.get("headersFrom", name)
	if err != nil {
		return nil, err
	}
	header := http.Header{}
	for key, value := range secret.Data {
		v := strings.TrimRight(string(value), "\r\n")
		switch {
		case !httpguts.ValidHeaderFieldName(key):
			return nil, fmt.Errorf("headersFrom: key %q of Secret %s is not a valid header name", key, s.name(name))
		case reservedHeaders[http.CanonicalHeaderKey(key)]:
			return nil, fmt.Errorf("headersFrom: key %q of Secret %s is a header the controller sets", key, s.name(name))
		case !httpguts.ValidHeaderFieldValue(v):
			return nil, fmt.Errorf("headersFrom: the value of key %q of Secret %s is not a valid header value", key, s.name(name))
		}
		header.Set(key, v)
	}
	return header, nil
}
