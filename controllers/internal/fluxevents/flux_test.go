package fluxevents

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1"
	"github.com/fluxcd/pkg/runtime/events"
	"github.com/go-logr/logr"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
)

// The sender posts the event as Flux's eventv1.Event: the involved object
// as referenced, the severity of its type, the metadata as given.
func TestFluxSenderPostsTheEvent(t *testing.T) {
	g := gomega.NewWithT(t)
	posted := make(chan eventv1.Event, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var e eventv1.Event
		if err := json.Unmarshal(body, &e); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		posted <- e
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	s, err := NewFluxSender(srv.URL, "extendeddaemonset-controller", logr.Discard())
	g.Expect(err).NotTo(gomega.HaveOccurred())

	e := event("CanaryFailed")
	e.Regarding.APIVersion = "extendeddaemonset.io/v1alpha1"
	e.Type, e.Action, e.Message = corev1.EventTypeWarning, "Canary", "canary agent-2 failed: CrashLoopBackOff"
	e.Metadata = map[string]string{"extendeddaemonset.io/revision": "5d8f", "extendeddaemonset.io/token": "CanaryFailed/replicaSet=agent-2"}
	g.Expect(s.Send(e)).To(gomega.Succeed())
	var got eventv1.Event
	g.Expect(posted).To(gomega.Receive(&got))
	g.Expect(got.InvolvedObject).To(gomega.Equal(e.Regarding))
	g.Expect(got.Severity).To(gomega.Equal(eventv1.EventSeverityError))
	g.Expect(got.Reason).To(gomega.Equal("CanaryFailed"))
	g.Expect(got.Message).To(gomega.Equal(e.Message))
	g.Expect(got.Metadata).To(gomega.Equal(e.Metadata))
	g.Expect(got.ReportingController).To(gomega.Equal("extendeddaemonset-controller"))
	g.Expect(got.RelatedObject).To(gomega.BeNil())
}

// A notification-controller that fails is a failed send, in Flux's words;
// one that refuses a duplicate (429) is not.
func TestFluxSenderReportsFailures(t *testing.T) {
	g := gomega.NewWithT(t)
	var status atomic.Int32
	status.Store(http.StatusServiceUnavailable)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(int(status.Load())) }))
	defer srv.Close()
	s, err := NewFluxSender(srv.URL, "extendeddaemonset-controller", logr.Discard(), events.WithRetryMax(0))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	e := event("CanaryFailed")
	e.Type = corev1.EventTypeWarning
	g.Expect(s.Send(e)).To(gomega.MatchError(gomega.ContainSubstring("unable to record event")))

	status.Store(http.StatusTooManyRequests)
	g.Expect(s.Send(e)).To(gomega.Succeed())
}
