package analysis

import (
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

func TestCredentialsFromSecret(t *testing.T) {
	server := httptest.NewTLSServer(http.NotFoundHandler())
	defer server.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})

	cases := []struct {
		name string
		data map[string][]byte
		want Credentials
		err  []string
	}{
		{"empty", nil, Credentials{}, nil},
		{"token", map[string][]byte{"token": []byte("abc\n"), "other": []byte("x")}, Credentials{BearerToken: "abc"}, nil},
		{"basic auth", map[string][]byte{"username": []byte("u"), "password": []byte("p w")}, Credentials{Username: "u", Password: "p w"}, nil},
		{"ca only", map[string][]byte{"ca.crt": caPEM}, Credentials{CA: caPEM}, nil},
		{"token and ca", map[string][]byte{"token": []byte("abc"), "ca.crt": caPEM}, Credentials{BearerToken: "abc", CA: caPEM}, nil},
		{"token and basic auth", map[string][]byte{"token": []byte("abc"), "username": []byte("u"), "password": []byte("p")}, Credentials{},
			[]string{`"token"`, `"username"`, "not both"}},
		{"token and password", map[string][]byte{"token": []byte("abc"), "password": []byte("p")}, Credentials{}, []string{"not both"}},
		{"username alone", map[string][]byte{"username": []byte("u")}, Credentials{}, []string{`both "username" and "password"`}},
		{"password alone", map[string][]byte{"password": []byte("p")}, Credentials{}, []string{`both "username" and "password"`}},
		{"empty token", map[string][]byte{"token": []byte("\n")}, Credentials{}, []string{`"token" is empty`}},
		{"empty username", map[string][]byte{"username": {}, "password": []byte("p")}, Credentials{}, []string{`"username" is empty`}},
		{"ca not PEM", map[string][]byte{"ca.crt": []byte("not a certificate")}, Credentials{}, []string{`"ca.crt"`, "PEM"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := CredentialsFromSecret(c.data)
			if len(c.err) == 0 {
				if err != nil || got.BearerToken != c.want.BearerToken || got.Username != c.want.Username ||
					got.Password != c.want.Password || string(got.CA) != string(c.want.CA) {
					t.Errorf("got %+v, %v; want %+v", got, err, c.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("got %+v, want an error", got)
			}
			for _, part := range c.err {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q lacks %q", err, part)
				}
			}
		})
	}
}

func TestNewQuerierRejectsBadProviders(t *testing.T) {
	for _, address := range []string{"", "prometheus:9090", "ftp://prometheus", "http://", "http://a b"} {
		if _, err := NewQuerier(v1alpha1.PrometheusProvider{Address: address}, Credentials{}); err == nil {
			t.Errorf("address %q accepted", address)
		}
	}
	if _, err := NewQuerier(v1alpha1.PrometheusProvider{Address: "https://p"}, Credentials{CA: []byte("junk")}); err == nil {
		t.Error("a CA that is not PEM accepted")
	}
}

const vectorBody = `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"pod":"canary-a"},"value":[1893499200,"0.002"]}]}}`

// measureAgainst takes one measurement of a threshold metric from a test
// server standing in for Prometheus.
func measureAgainst(t *testing.T, server *httptest.Server, p v1alpha1.PrometheusProvider, c Credentials) v1alpha1.Measurement {
	t.Helper()
	if p.Address == "" {
		p.Address = server.URL
	}
	q, err := NewQuerier(p, c)
	if err != nil {
		t.Fatal(err)
	}
	metric := v1alpha1.AnalysisMetric{Name: "m", Query: `x{pod=~"{{.CanaryPodRegex}}"}`, ThresholdRange: maxRange(0.01)}
	return Measure(context.Background(), q, metric, testVars(), t0)
}

func respond(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

func TestQueryErrorsBecomeErrorMeasurements(t *testing.T) {
	slow := func(w http.ResponseWriter, r *http.Request) {
		// The server notices the client has gone only once the body is read.
		_ = r.ParseForm()
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
			respond(http.StatusOK, vectorBody)(w, r)
		}
	}
	cases := []struct {
		name    string
		handler http.HandlerFunc
		message []string
	}{
		{"slower than the timeout", slow, []string{"query failed", "no answer within the provider timeout of 100ms", "context deadline exceeded"}},
		{"malformed JSON", respond(http.StatusOK, `{"status":"success","data":{`), []string{"unreadable answer from Prometheus"}},
		{"HTTP 500", respond(http.StatusInternalServerError, "internal\nerror"), []string{"server error: 500: internal error"}},
		{"HTTP 503", respond(http.StatusServiceUnavailable, "<html>no healthy upstream</html>"), []string{"server error: 503", "no healthy upstream"}},
		{"bad_data", respond(http.StatusBadRequest, `{"status":"error","errorType":"bad_data","error":"1:8: parse error: unexpected \"}\""}`),
			[]string{`query rejected by Prometheus: 1:8: parse error: unexpected "}"`}},
		{"execution error", respond(http.StatusUnprocessableEntity, `{"status":"error","errorType":"execution","error":"query processing would load too many samples"}`),
			[]string{"query failed: execution: query processing would load too many samples"}},
		{"status error with warnings", respond(http.StatusServiceUnavailable, `{"status":"error","errorType":"unavailable","error":"x","warnings":["w"]}`),
			[]string{"server error: 503"}},
		{"matrix", respond(http.StatusOK, `{"status":"success","data":{"resultType":"matrix","result":[]}}`),
			[]string{"query must return an instant vector or scalar, got matrix"}},
		{"string", respond(http.StatusOK, `{"status":"success","data":{"resultType":"string","result":[1893499200,"x"]}}`),
			[]string{"unreadable answer from Prometheus", "string"}},
		{"unauthorized", respond(http.StatusUnauthorized, "Unauthorized"), []string{"client error: 401", "Unauthorized"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			server := httptest.NewServer(c.handler)
			defer server.Close()
			started := time.Now()
			m := measureAgainst(t, server, v1alpha1.PrometheusProvider{Timeout: &metav1.Duration{Duration: 100 * time.Millisecond}}, Credentials{})
			if m.Phase != v1alpha1.AnalysisError {
				t.Errorf("phase %s (%s), want Error", m.Phase, m.Message)
			}
			for _, part := range c.message {
				if !strings.Contains(m.Message, part) {
					t.Errorf("message %q lacks %q", m.Message, part)
				}
			}
			if elapsed := time.Since(started); elapsed > 3*time.Second {
				t.Errorf("took %s: the timeout was not applied", elapsed)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	server := httptest.NewServer(http.NotFoundHandler())
	address := server.URL
	server.Close()
	m := measureAgainst(t, server, v1alpha1.PrometheusProvider{Address: address}, Credentials{})
	if m.Phase != v1alpha1.AnalysisError || !strings.Contains(m.Message, "connection refused") {
		t.Errorf("%s %q", m.Phase, m.Message)
	}
}

func TestQuerySendsTheRenderedQueryAndKeepsWarnings(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		if got := r.Form.Get("query"); got != `x{pod=~"canary-a|canary-b"}` {
			t.Errorf("query %q", got)
		}
		if got := r.Form.Get("time"); got != "1893499200" {
			t.Errorf("time %q", got)
		}
		respond(http.StatusOK, `{"status":"success","warnings":["partial data"],"infos":["metric might not be a counter"],`+
			`"data":{"resultType":"vector","result":[{"metric":{},"value":[1893499200,"0.002"]}]}}`)(w, r)
	}))
	defer server.Close()
	m := measureAgainst(t, server, v1alpha1.PrometheusProvider{}, Credentials{})
	want := "0.002 within [-Inf, 0.01] (warnings: partial data; info: metric might not be a counter)"
	if m.Phase != v1alpha1.AnalysisSuccessful || m.Message != want {
		t.Errorf("%s %q, want %q", m.Phase, m.Message, want)
	}
}

// requireAuthorization answers like Prometheus behind an authenticating
// proxy: 401 unless the Authorization header is the expected one.
func requireAuthorization(t *testing.T, want string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Authorization"); got != want {
			t.Errorf("Authorization %q, want %q", got, want)
			respond(http.StatusUnauthorized, "Unauthorized")(w, r)
			return
		}
		respond(http.StatusOK, vectorBody)(w, r)
	}
}

func TestCredentialsAreSent(t *testing.T) {
	cases := []struct {
		name   string
		creds  Credentials
		header string
	}{
		{"bearer token", Credentials{BearerToken: "s3cr3t"}, "Bearer s3cr3t"},
		{"basic auth", Credentials{Username: "user", Password: "pass"}, "Basic dXNlcjpwYXNz"},
		{"none", Credentials{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			server := httptest.NewServer(requireAuthorization(t, c.header))
			defer server.Close()
			if m := measureAgainst(t, server, v1alpha1.PrometheusProvider{}, c.creds); m.Phase != v1alpha1.AnalysisSuccessful {
				t.Errorf("%s %q", m.Phase, m.Message)
			}
		})
	}
}

func TestCredentialsDoNotFollowRedirectsElsewhere(t *testing.T) {
	elsewhere := httptest.NewServer(requireAuthorization(t, ""))
	defer elsewhere.Close()
	prometheus := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cr3t" {
			t.Errorf("the provider did not get the token")
		}
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer prometheus.Close()
	if m := measureAgainst(t, prometheus, v1alpha1.PrometheusProvider{}, Credentials{BearerToken: "s3cr3t"}); m.Phase != v1alpha1.AnalysisSuccessful {
		t.Errorf("%s %q", m.Phase, m.Message)
	}
}

func TestTLS(t *testing.T) {
	server := httptest.NewUnstartedServer(requireAuthorization(t, "Bearer s3cr3t"))
	// The handshake refused on purpose below would be logged as a failure.
	server.Config.ErrorLog = log.New(io.Discard, "", 0)
	server.StartTLS()
	defer server.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})

	creds, err := CredentialsFromSecret(map[string][]byte{"token": []byte("s3cr3t"), "ca.crt": caPEM})
	if err != nil {
		t.Fatal(err)
	}
	if m := measureAgainst(t, server, v1alpha1.PrometheusProvider{}, creds); m.Phase != v1alpha1.AnalysisSuccessful {
		t.Errorf("with the CA: %s %q", m.Phase, m.Message)
	}

	m := measureAgainst(t, server, v1alpha1.PrometheusProvider{}, Credentials{BearerToken: "s3cr3t"})
	if m.Phase != v1alpha1.AnalysisError || !strings.Contains(m.Message, "certificate") {
		t.Errorf("without the CA: %s %q", m.Phase, m.Message)
	}

	m = measureAgainst(t, server, v1alpha1.PrometheusProvider{InsecureSkipVerify: true}, Credentials{BearerToken: "s3cr3t"})
	if m.Phase != v1alpha1.AnalysisSuccessful {
		t.Errorf("with insecureSkipVerify: %s %q", m.Phase, m.Message)
	}
}

// A provider's timeout is capped at MaxTimeout, and Prometheus is told the
// same timeout so that it stops evaluating a query nobody waits for.
func TestTimeoutIsBounded(t *testing.T) {
	cases := []struct {
		timeout *metav1.Duration
		want    time.Duration
	}{
		{nil, DefaultTimeout},
		{&metav1.Duration{Duration: 3 * time.Second}, 3 * time.Second},
		{&metav1.Duration{Duration: 72 * time.Hour}, MaxTimeout},
	}
	for _, c := range cases {
		sent := make(chan string, 1)
		server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := r.ParseForm(); err != nil {
				t.Error(err)
			}
			sent <- r.Form.Get("timeout")
			respond(http.StatusOK, vectorBody)(w, r)
		}))
		q, err := NewQuerier(v1alpha1.PrometheusProvider{Address: server.URL, Timeout: c.timeout}, Credentials{})
		if err != nil {
			t.Fatal(err)
		}
		if got := q.(*promQuerier).timeout; got != c.want {
			t.Errorf("timeout %v: queries bounded by %s, want %s", c.timeout, got, c.want)
		}
		if _, _, err := q.Query(context.Background(), "up", t0); err != nil {
			t.Fatal(err)
		}
		if got := <-sent; got != c.want.String() {
			t.Errorf("timeout %v: Prometheus was told %q, want %q", c.timeout, got, c.want)
		}
		server.Close()
	}
}
