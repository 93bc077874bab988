package inspect

import (
	"cmp"
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// shownEvents is how many of the last events status shows.
const shownEvents = 5

// lastEvents are the last events about eds, oldest first. The controller
// writes events.k8s.io events; their core/v1 view names eds as the
// involved object.
func lastEvents(ctx context.Context, c client.Client, eds *v1alpha1.ExtendedDaemonSet) ([]corev1.Event, error) {
	var list corev1.EventList
	if err := c.List(ctx, &list, client.InNamespace(eds.Namespace),
		client.MatchingFields{"involvedObject.uid": string(eds.UID)}); err != nil {
		return nil, explainList(err, "Event", "events", eds.Namespace)
	}
	events := list.Items
	slices.SortStableFunc(events, func(a, b corev1.Event) int {
		return cmp.Or(eventTime(&a).Compare(eventTime(&b)), cmp.Compare(a.Name, b.Name))
	})
	return events[max(0, len(events)-shownEvents):], nil
}

// eventTime is when an event was last seen: an events.k8s.io event keeps
// it in its series or eventTime, a core/v1 one in lastTimestamp.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}
