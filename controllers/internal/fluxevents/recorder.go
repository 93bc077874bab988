package fluxevents

import (
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// MetadataFunc returns the metadata of an event about regarding (and
// related, nil when none) with reason, keys under the API group's prefix.
type MetadataFunc func(regarding, related runtime.Object, reason string) map[string]string

// Recorder is the event recorder the reconcilers use when events also go to
// the notification-controller: it records each event as the Kubernetes
// recorder it wraps does, then queues it for Flux without waiting.
type Recorder struct {
	kube     events.EventRecorder
	queue    *Queue
	scheme   *runtime.Scheme
	group    string
	metadata MetadataFunc
	log      logr.Logger
}

var _ events.EventRecorder = &Recorder{}

// NewRecorder wraps kube. scheme names the kinds of the objects events are
// about; group is the API group whose prefix the metadata keys take.
func NewRecorder(kube events.EventRecorder, queue *Queue, scheme *runtime.Scheme, group string, metadata MetadataFunc, log logr.Logger) *Recorder {
	return &Recorder{kube: kube, queue: queue, scheme: scheme, group: group, metadata: metadata, log: log}
}

// Eventf records the Kubernetes event, then queues the Flux event.
func (r *Recorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.kube.Eventf(regarding, related, eventtype, reason, action, note, args...)
	var metadata map[string]string
	if r.metadata != nil {
		metadata = r.metadata(regarding, related, reason)
	}
	e, err := snapshot(r.scheme, r.group, metadata, regarding, related, eventtype, reason, action, note, args)
	if err != nil {
		r.log.Error(err, "not sending an event to the notification-controller", "reason", reason)
		return
	}
	r.queue.Enqueue(e)
}
