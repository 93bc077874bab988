package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// secretValue is in every Secret of these tests; no error may quote it.
const secretValue = "s3cr3t"

func secretsReader() *fake.ClientBuilder {
	secret := func(name string, data map[string]string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Data: map[string][]byte{}}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return s
	}
	return fake.NewClientBuilder().WithObjects(
		secret("hook", map[string]string{
			"url":     "https://hooks.example/T0/" + secretValue + "\n",
			"bad-url": "hooks.example/" + secretValue,
			"ftp":     "ftp://hooks.example/" + secretValue,
			"key":     secretValue + "\n",
			"empty":   "\n",
		}),
		secret("headers", map[string]string{"Authorization": "Bearer " + secretValue + "\n", "x-team": "agents"}),
		secret("bad-header-name", map[string]string{"bad header": secretValue}),
		secret("bad-header-value", map[string]string{"X-Token": secretValue + "\nX-Other: 1"}),
		secret("reserved-header", map[string]string{"x-extendeddaemonset-signature": secretValue}),
	)
}

func selector(name, key string) *corev1.SecretKeySelector {
	return &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}
}

func TestResolveReadsTheSecrets(t *testing.T) {
	c := secretsReader().Build()
	r, err := Resolve(context.Background(), c, "ns", &v1alpha1.WebRequest{
		URLFrom:        selector("hook", "url"),
		HeadersFrom:    &corev1.LocalObjectReference{Name: "headers"},
		SigningKeyFrom: selector("hook", "key"),
		RequestTimeout: &metav1.Duration{Duration: 3 * time.Second},
		Retries:        ptr.To[int32](0),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Request{
		URL:        "https://hooks.example/T0/" + secretValue,
		Header:     http.Header{"Authorization": {"Bearer " + secretValue}, "X-Team": {"agents"}},
		SigningKey: []byte(secretValue),
		Timeout:    3 * time.Second,
	}
	if r.URL != want.URL || string(r.SigningKey) != string(want.SigningKey) || r.Timeout != want.Timeout || r.Retries != 0 ||
		r.Header.Get("Authorization") != want.Header.Get("Authorization") || r.Header.Get("X-Team") != "agents" {
		t.Errorf("got %+v, want %+v", r, want)
	}
}

// An optional signing key that is missing sends the request unsigned; one
// that is there signs it.
func TestResolveOptionalSigningKey(t *testing.T) {
	c := secretsReader().Build()
	for _, sel := range []*corev1.SecretKeySelector{selector("nope", "key"), selector("hook", "nope")} {
		sel.Optional = ptr.To(true)
		r, err := Resolve(context.Background(), c, "ns", &v1alpha1.WebRequest{URL: "http://a", SigningKeyFrom: sel})
		if err != nil || r.SigningKey != nil || r.URL != "http://a" {
			t.Errorf("optional %s/%s: got %+v, %v", sel.Name, sel.Key, r, err)
		}
	}
	sel := selector("hook", "key")
	sel.Optional = ptr.To(true)
	if r, err := Resolve(context.Background(), c, "ns", &v1alpha1.WebRequest{URL: "http://a", SigningKeyFrom: sel}); err != nil || string(r.SigningKey) != secretValue {
		t.Errorf("optional key present: got %+v, %v", r, err)
	}
}

// An inline URL needs no client, and the defaults are the CRD's.
func TestResolveInlineURLWithDefaults(t *testing.T) {
	r, err := Resolve(context.Background(), nil, "ns", &v1alpha1.WebRequest{URL: "http://receiver.ns.svc/metric"})
	if err != nil || r.URL != "http://receiver.ns.svc/metric" || r.Timeout != DefaultTimeout || r.Retries != DefaultRetries ||
		r.Header != nil || r.SigningKey != nil {
		t.Errorf("got %+v, %v", r, err)
	}
}

func TestResolveErrorsNameTheSecretAndKeyButNoValue(t *testing.T) {
	cases := []struct {
		name string
		spec v1alpha1.WebRequest
		want []string
	}{
		{"no URL", v1alpha1.WebRequest{}, []string{"neither url nor urlFrom"}},
		{"both URLs", v1alpha1.WebRequest{URL: "http://a", URLFrom: selector("hook", "url")}, []string{"both url and urlFrom"}},
		{"inline URL without host", v1alpha1.WebRequest{URL: "http:///" + secretValue}, []string{"url has no host"}},
		{"missing Secret", v1alpha1.WebRequest{URLFrom: selector("nope", "url")}, []string{"urlFrom", "Secret ns/nope not found"}},
		{"missing key", v1alpha1.WebRequest{URLFrom: selector("hook", "nope")}, []string{"urlFrom", `Secret ns/hook has no key "nope"`}},
		{"URL without scheme", v1alpha1.WebRequest{URLFrom: selector("hook", "bad-url")}, []string{`key "bad-url" of Secret ns/hook is not an http or https URL`}},
		{"ftp URL", v1alpha1.WebRequest{URLFrom: selector("hook", "ftp")}, []string{`key "ftp" of Secret ns/hook is not an http or https URL`}},
		{"headers Secret missing", v1alpha1.WebRequest{URL: "http://a", HeadersFrom: &corev1.LocalObjectReference{Name: "nope"}},
			[]string{"headersFrom", "Secret ns/nope not found"}},
		{"bad header name", v1alpha1.WebRequest{URL: "http://a", HeadersFrom: &corev1.LocalObjectReference{Name: "bad-header-name"}},
			[]string{`key "bad header" of Secret ns/bad-header-name is not a valid header name`}},
		{"bad header value", v1alpha1.WebRequest{URL: "http://a", HeadersFrom: &corev1.LocalObjectReference{Name: "bad-header-value"}},
			[]string{`key "X-Token" of Secret ns/bad-header-value is not a valid header value`}},
		{"reserved header", v1alpha1.WebRequest{URL: "http://a", HeadersFrom: &corev1.LocalObjectReference{Name: "reserved-header"}},
			[]string{"a header the controller sets"}},
		{"empty signing key", v1alpha1.WebRequest{URL: "http://a", SigningKeyFrom: selector("hook", "empty")},
			[]string{`signingKeyFrom: key "empty" of Secret ns/hook is empty`}},
		{"signing key Secret unnamed", v1alpha1.WebRequest{URL: "http://a", SigningKeyFrom: selector("", "key")},
			[]string{"signingKeyFrom: no Secret named"}},
	}
	c := secretsReader().Build()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Resolve(context.Background(), c, "ns", &tc.spec)
			if err == nil {
				t.Fatal("no error")
			}
			for _, part := range tc.want {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q lacks %q", err, part)
				}
			}
			if strings.Contains(err.Error(), secretValue) {
				t.Errorf("error %q quotes a secret value", err)
			}
		})
	}
}
