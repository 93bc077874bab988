package e2e

import (
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/extendeddaemonset/extendeddaemonset/controllers"
)

// expectEvent waits for an event of reason about obj whose note mentions
// every string of about (a replica set name, for instance), reported by the
// controller through the events.k8s.io API.
func (s *scenario) expectEvent(obj client.Object, reason string, about ...string) {
	s.t.Helper()
	s.expectEventOfType(obj, "", reason, about)
}

// expectWarning is expectEvent for a Warning event.
func (s *scenario) expectWarning(obj client.Object, reason string, about ...string) {
	s.t.Helper()
	s.expectEventOfType(obj, corev1.EventTypeWarning, reason, about)
}

// expectEventOfType waits for an event as expectEvent does, of eventType
// unless it is empty.
func (s *scenario) expectEventOfType(obj client.Object, eventType, reason string, about []string) {
	s.t.Helper()
	note := []gomega.OmegaMatcher{gomega.HavePrefix(reason + ": ")}
	for _, a := range about {
		note = append(note, gomega.ContainSubstring(a))
	}
	s.g.Eventually(func(g gomega.Gomega) {
		var seen []string
		for _, ev := range s.controllerEvents(g, obj) {
			if eventType == "" || ev.Type == eventType {
				seen = append(seen, ev.Reason+": "+ev.Note)
			}
		}
		g.Expect(seen).To(gomega.ContainElement(gomega.And(note...)), "%s events of %s", eventType, obj.GetName())
	}).WithTimeout(time.Minute).WithPolling(pollInterval).Should(gomega.Succeed())
}

// controllerEvents lists the events the controller reported about obj.
func (s *scenario) controllerEvents(g gomega.Gomega, obj client.Object) []eventsv1.Event {
	gvk, err := apiutil.GVKForObject(obj, env.Client.Scheme())
	g.Expect(err).NotTo(gomega.HaveOccurred())
	list, err := env.Kube.EventsV1().Events(obj.GetNamespace()).List(s.ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	var about []eventsv1.Event
	for _, ev := range list.Items {
		if ev.Regarding.Kind == gvk.Kind && ev.Regarding.Name == obj.GetName() && ev.Regarding.UID == obj.GetUID() &&
			ev.ReportingController == controllers.ControllerName {
			about = append(about, ev)
		}
	}
	return about
}
