package fluxevents

import (
	"fmt"
	"maps"
	"strings"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/reference"
)

// MetadataDetail is the metadata key, under the API group's prefix, of the
// Details taken out of an event's message.
const MetadataDetail = "detail"

// Event is what is sent of one recorded event, taken when it is recorded:
// the reconciler goes on changing its objects while the event waits.
type Event struct {
	Regarding corev1.ObjectReference
	// Related is nil when the event has no related object.
	Related *corev1.ObjectReference
	// Type is corev1.EventTypeNormal or corev1.EventTypeWarning.
	Type, Reason, Action string
	// Message is the note without its Details.
	Message string
	// Metadata are full keys (group/key), as the notification-controller
	// reads them.
	Metadata map[string]string
}

// snapshot builds the Event of one Eventf call. Metadata holds what
// metadata returned, the Details under group/MetadataDetail, and the
// regarding object's annotations of Flux's event group, which Flux's own
// recorder forwards too.
func snapshot(scheme *runtime.Scheme, group string, metadata map[string]string,
	regarding, related runtime.Object, eventtype, reason, action, note string, args []any,
) (Event, error) {
	ref, err := reference.GetReference(scheme, regarding)
	if err != nil {
		return Event{}, fmt.Errorf("referencing the regarding object: %w", err)
	}
	message, details := splitDetails(note, args)
	e := Event{Regarding: *ref, Type: eventtype, Reason: reason, Action: action, Message: message, Metadata: maps.Clone(metadata)}
	if e.Metadata == nil {
		e.Metadata = map[string]string{}
	}
	if details != "" {
		e.Metadata[group+"/"+MetadataDetail] = details
	}
	if obj, err := apimeta.Accessor(regarding); err == nil {
		for k, v := range obj.GetAnnotations() {
			if strings.HasPrefix(k, eventv1.Group+"/") {
				e.Metadata[k] = v
			}
		}
	}
	if related != nil {
		if e.Related, err = reference.GetReference(scheme, related); err != nil {
			return Event{}, fmt.Errorf("referencing the related object: %w", err)
		}
	}
	return e, nil
}
