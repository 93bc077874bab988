package fluxevents

import (
	"errors"
	"fmt"
	"sync"

	"github.com/fluxcd/pkg/runtime/events"
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
)

// FluxSender posts events with Flux's recorder, configured without a
// Kubernetes event backend: the Kubernetes event was recorded already, when
// the reconciler told it. Flux's recorder builds the eventv1.Event (the
// involved object, severity from the event type, the metadata, the
// reporting controller and instance) and posts it, retrying connection
// errors and 5xx answers; a 429, the notification-controller discarding a
// duplicate, is not an error.
type FluxSender struct {
	recorder events.Recorder
	// failed records what the recorder logged as an error during the send
	// in progress: it reports no error of its own. One worker sends, so
	// one send at a time.
	failed *failureNote
}

// NewFluxSender sends to address (http://host:port of the
// notification-controller's event receiver) as reportingController; opts
// tune Flux's recorder (its retries, TLS).
func NewFluxSender(address, reportingController string, log logr.Logger, opts ...events.RecorderOption) (*FluxSender, error) {
	if address == "" {
		return nil, errors.New("no address of the notification-controller")
	}
	note := &failureNote{}
	// The scheme is never consulted: every object arrives as the
	// reference taken when the event was recorded.
	rec, err := events.NewRecorder(logr.New(&noteErrors{LogSink: log.GetSink(), note: note}), address, reportingController,
		append([]events.RecorderOption{events.WithScheme(runtime.NewScheme())}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("creating Flux's event recorder for %s: %w", address, err)
	}
	return &FluxSender{recorder: rec, failed: note}, nil
}

// Send posts e and returns the error Flux's recorder logged, if any.
func (s *FluxSender) Send(e Event) error {
	s.failed.reset()
	var related runtime.Object
	if e.Related != nil {
		related = e.Related
	}
	s.recorder.AnnotatedEventf(&e.Regarding, related, e.Metadata, e.Type, e.Reason, e.Action, "%s", e.Message)
	return s.failed.take()
}

// failureNote keeps the first error logged during a send.
type failureNote struct {
	mu  sync.Mutex
	err error
}

func (n *failureNote) reset() { _ = n.take() }

func (n *failureNote) take() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	err := n.err
	n.err = nil
	return err
}

func (n *failureNote) note(err error, msg string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.err == nil {
		n.err = fmt.Errorf("%s: %w", msg, err)
	}
}

// noteErrors is a log sink that also notes the errors logged through it
// (and through the loggers derived from it).
type noteErrors struct {
	logr.LogSink
	note *failureNote
}

func (s *noteErrors) Error(err error, msg string, keysAndValues ...any) {
	s.note.note(err, msg)
	if s.LogSink != nil {
		s.LogSink.Error(err, msg, keysAndValues...)
	}
}

func (s *noteErrors) Enabled(level int) bool { return s.LogSink != nil && s.LogSink.Enabled(level) }

func (s *noteErrors) Info(level int, msg string, keysAndValues ...any) {
	if s.LogSink != nil {
		s.LogSink.Info(level, msg, keysAndValues...)
	}
}

func (s *noteErrors) Init(info logr.RuntimeInfo) {
	if s.LogSink != nil {
		s.LogSink.Init(info)
	}
}

func (s *noteErrors) WithValues(keysAndValues ...any) logr.LogSink {
	if s.LogSink == nil {
		return s
	}
	return &noteErrors{LogSink: s.LogSink.WithValues(keysAndValues...), note: s.note}
}

func (s *noteErrors) WithName(name string) logr.LogSink {
	if s.LogSink == nil {
		return s
	}
	return &noteErrors{LogSink: s.LogSink.WithName(name), note: s.note}
}
