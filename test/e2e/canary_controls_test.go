package e2e

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// An auto canary paused by a person, by annotation or by the spec field,
// is held past its duration; once the pause is lifted it is promoted.
func TestCanaryPausedByUser(t *testing.T) {
	s := newScenario(t)
	duration := 5 * time.Second
	eds, nodes := s.createAgent(&v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(2)), Duration: &metav1.Duration{Duration: duration},
	})

	// Each pause goes in the same write as the new template: the canary
	// can then not be promoted before the controller has read the pause.
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) {
		setVersion(e, "v2")
		annotate(e, v1alpha1.CanaryPausedAnnotation, "true")
	})
	canary := s.expectCanaryHolds(eds, nodes, "v1", "v2", canaryPaused, "PausedByUser", duration)
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { delete(e.Annotations, v1alpha1.CanaryPausedAnnotation) })
	s.expectPromoted(eds, "v2", nodes, canary.ReplicaSet)

	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) {
		setVersion(e, "v3")
		e.Spec.Strategy.Canary.Paused = true
	})
	canary = s.expectCanaryHolds(eds, nodes, "v2", "v3", canaryPaused, "PausedByUser", duration)
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { e.Spec.Strategy.Canary.Paused = false })
	s.expectPromoted(eds, "v3", nodes, canary.ReplicaSet)
}

// A canary auto-paused because its container restarted more than
// autoPause.maxRestarts is held past its duration; the spec field unpause
// naming it lets it go on, and it is promoted.
func TestAutoPausedCanaryUnpausedBySpec(t *testing.T) {
	s := newScenario(t)
	eds, nodes := s.createAgent(&v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(1)), Duration: &metav1.Duration{Duration: canaryHeadStart},
		AutoPause: &v1alpha1.CanaryAutoPause{MaxRestarts: ptr.To[int32](1)},
	})

	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	running := s.expectCanary(eds, canaryRunning, "").Status.Canary
	s.setPodStatus(eds, running.ReplicaSet, running.Nodes, restarted(2, ""))
	canary := s.expectCanaryHolds(eds, nodes, "v1", "v2", canaryPaused, "Error", canaryHeadStart)
	s.expectWarning(eds, "CanaryPaused", canary.ReplicaSet, "Error", "autoPause.maxRestarts")

	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { e.Spec.Strategy.Canary.Unpause = canary.ReplicaSet })
	s.g.Expect(s.get(eds).Spec.Strategy.Canary.Unpause).To(gomega.Equal(canary.ReplicaSet),
		"spec.strategy.canary.unpause was not stored: the CRD lacks it")
	s.expectPromoted(eds, "v2", nodes, canary.ReplicaSet)
}

// A canary failed by a person through the spec field fails at once: the
// ExtendedDaemonSet is Stalled, its spec as the person wrote it, the canary
// nodes back on the stable template. A retry token starts the same canary
// again.
func TestCanaryFailedBySpecThenRetried(t *testing.T) {
	s := newScenario(t)
	// The default duration (10m) leaves it to the person to end the canary.
	eds, nodes := s.createAgent(&v1alpha1.CanaryStrategy{Replicas: ptr.To(intstr.FromInt32(2))})

	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	canary := *s.expectCanary(eds, canaryRunning, "").Status.Canary
	s.expectVersions(eds, nodes, "v1", canary.Nodes, "v2")

	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { e.Spec.Strategy.Canary.Fail = canary.ReplicaSet })
	written := s.get(eds)
	failed := s.expectCanary(eds, canaryFailed, "FailedByUser")
	s.g.Expect(failed.Generation).To(gomega.Equal(written.Generation))
	s.g.Expect(specJSON(s.g, failed)).To(gomega.Equal(specJSON(s.g, written)), "the controller modified the spec")
	s.g.Expect(failed.Status.ActiveReplicaSet).NotTo(gomega.Equal(canary.ReplicaSet))
	s.expectVersions(eds, nodes, "v1", nil, "")
	s.expectWarning(eds, "CanaryFailed", canary.ReplicaSet, "FailedByUser")

	// The fail goes in the retry's write: left in place, it would fail the
	// new attempt at once. The canary nodes, back on v1, take v2 again.
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) {
		e.Spec.Strategy.Canary.Fail, e.Spec.Strategy.Canary.Retry = "", "1"
	})
	retried := *s.expectCanary(eds, canaryRunning, "").Status.Canary
	s.g.Expect(retried.ReplicaSet).To(gomega.Equal(canary.ReplicaSet))
	s.expectVersions(eds, nodes, "v1", retried.Nodes, "v2")
	s.expectEvent(eds, "CanaryRetried", canary.ReplicaSet)

	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { e.Spec.Strategy.Canary.Validate = canary.ReplicaSet })
	s.expectPromoted(eds, "v2", nodes, canary.ReplicaSet)
}
