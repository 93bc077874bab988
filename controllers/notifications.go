package controllers

import (
	"fmt"
	"strconv"
	"strings"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/fluxevents"
)

// Metadata keys of the events sent to Flux, under the API group's prefix,
// as the notification-controller reads them: it tells repeated events
// from new ones by their object, message, revision and token.
var (
	metadataRevision = v1alpha1.GroupVersion.Group + "/" + eventv1.MetaRevisionKey
	metadataToken    = v1alpha1.GroupVersion.Group + "/" + eventv1.MetaTokenKey
)

// withFluxEvents wraps recorder so that every event also goes to the
// notification-controller at address, from a queue only the leader
// drains.
func withFluxEvents(mgr ctrl.Manager, recorder events.EventRecorder, address string) (events.EventRecorder, error) {
	log := mgr.GetLogger().WithName("flux-events")
	sender, err := fluxevents.NewFluxSender(address, ControllerName, log)
	if err != nil {
		return nil, err
	}
	queue := fluxevents.NewQueue(sender, fluxevents.DefaultQueueSize, fluxevents.DefaultShutdownGrace, log)
	if err := mgr.Add(queue); err != nil {
		return nil, fmt.Errorf("adding the queue of events for the notification-controller: %w", err)
	}
	return fluxevents.NewRecorder(recorder, queue, mgr.GetScheme(), v1alpha1.GroupVersion.Group, eventMetadata, log), nil
}

// eventMetadata is the metadata of an event sent to Flux. Its revision is
// the template hash of the replica set the event is about (the related
// object, or the regarding one); its token names the transition's subject:
// the reason, that replica set, and, when the regarding ExtendedDaemonSet's
// status holds them for it, the canary instance and step and the domain
// baking. Distinct transitions then differ in token or message, and a
// transition told twice is the same event, which Flux's rate limiting
// sends once.
func eventMetadata(regarding, related runtime.Object, reason string) map[string]string {
	ers, ok := related.(*v1alpha1.ExtendedDaemonSetReplicaSet)
	if !ok {
		ers, _ = regarding.(*v1alpha1.ExtendedDaemonSetReplicaSet)
	}
	token := []string{reason}
	metadata := map[string]string{}
	if ers != nil {
		if rev := replicaSetRevision(ers); rev != "" {
			metadata[metadataRevision] = rev
		}
		token = append(token, "replicaSet="+ers.Name)
		if eds, ok := regarding.(*v1alpha1.ExtendedDaemonSet); ok {
			token = append(token, transitionSubject(eds, ers.Name)...)
		}
	}
	metadata[metadataToken] = strings.Join(token, "/")
	return metadata
}

// transitionSubject names, in the status of eds, the canary instance and
// step and the baking domain of replica set rs.
func transitionSubject(eds *v1alpha1.ExtendedDaemonSet, rs string) []string {
	var subject []string
	if c := eds.Status.Canary; c != nil && c.ReplicaSet == rs {
		if c.Instance != "" {
			subject = append(subject, "instance="+c.Instance)
		}
		if c.Step > 0 {
			subject = append(subject, "step="+strconv.Itoa(int(c.Step)))
		}
	}
	if b := eds.Status.Bake; b != nil && b.ReplicaSet == rs && b.Domain != "" && b.Domain != b.PassedThrough {
		subject = append(subject, "domain="+b.Domain)
	}
	return subject
}

// replicaSetRevision is the hash of the replica set's pod template.
func replicaSetRevision(ers *v1alpha1.ExtendedDaemonSetReplicaSet) string {
	if ers.Spec.TemplateGeneration != "" {
		return ers.Spec.TemplateGeneration
	}
	return ers.Labels[v1alpha1.TemplateHashLabel]
}
