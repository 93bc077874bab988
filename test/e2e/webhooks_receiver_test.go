package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// receiver is a webhook receiver on loopback, which the e2e controllers
// may reach (--allowed-webhook-hosts=127.0.0.1). Each path answers 503
// until it is opened (200) or made to hang; every request is recorded,
// and checked against the signing key when one is set.
type receiver struct {
	srv *httptest.Server
	key []byte

	mu       sync.Mutex
	open     map[string]bool
	hanging  map[string]bool
	received []delivery
	// release ends the hanging requests at the end of the test.
	release chan struct{}
}

// delivery is one request a receiver got.
type delivery struct {
	path string
	// id is the X-Extendeddaemonset-Delivery header.
	id string
	// signed: the X-Extendeddaemonset-Signature header is the HMAC-SHA256
	// of the body with the receiver's key, computed here.
	signed  bool
	payload payload
}

// payload is the part of a webhook's JSON the tests read.
type payload struct {
	DeliveryID string `json:"deliveryId"`
	Object     struct {
		Kind, Namespace, Name, UID string
	} `json:"object"`
	Phase      string `json:"phase"`
	Transition struct {
		Webhook, Name, Reason string
		Gate                  *struct {
			Name, Type string
			Step       int32
		}
	} `json:"transition"`
	Step        int32    `json:"step"`
	ReplicaSet  string   `json:"replicaSet"`
	NewImages   []image  `json:"newImages"`
	OldImages   []image  `json:"oldImages"`
	CanaryNodes []string `json:"canaryNodes"`
}

type image struct{ Container, Image string }

func startReceiver(t *testing.T, key []byte) *receiver {
	r := &receiver{key: key, open: map[string]bool{}, hanging: map[string]bool{}, release: make(chan struct{})}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() {
		close(r.release)
		r.srv.Close()
	})
	return r
}

// url is the receiver's URL for path.
func (r *receiver) url(path string) string { return r.srv.URL + "/" + path }

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	d := delivery{path: req.URL.Path[1:], id: req.Header.Get("X-Extendeddaemonset-Delivery")}
	if r.key != nil {
		mac := hmac.New(sha256.New, r.key)
		mac.Write(body)
		want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
		d.signed = hmac.Equal([]byte(want), []byte(req.Header.Get("X-Extendeddaemonset-Signature")))
	}
	_ = json.Unmarshal(body, &d.payload)
	r.mu.Lock()
	r.received = append(r.received, d)
	open, hang := r.open[d.path], r.hanging[d.path]
	r.mu.Unlock()
	switch {
	case hang:
		select {
		case <-req.Context().Done():
		case <-r.release:
		}
	case open:
		w.WriteHeader(http.StatusOK)
	default:
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("secret-looking answer body that must never reach status"))
	}
}

// openPath makes path answer 200.
func (r *receiver) openPath(path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.open[path] = true
}

// hang makes path never answer.
func (r *receiver) hang(path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hanging[path] = true
}

// got are the deliveries to path so far.
func (r *receiver) got(path string) []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []delivery
	for _, d := range r.received {
		if d.path == path {
			out = append(out, d)
		}
	}
	return out
}
