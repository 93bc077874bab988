package e2e

import (
	"testing"

	"github.com/onsi/gomega"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/argocd"
)

// A new generation the controller has not observed yet is in progress for
// Flux and Argo CD alike, never still Current from the previous one: a sync
// that just changed the spec must wait for the controller.
func TestNewGenerationNotObservedIsInProgress(t *testing.T) {
	s := newScenario(t)
	nodes := s.nodeNames()
	eds := s.create(agentEDS(s.ns, "agent", "v1"))
	s.expectRolledOut(eds, "v1", nodes)

	s.g.Expect(env.StopControllers()).To(gomega.Succeed())
	restarted := false
	s.t.Cleanup(func() {
		if !restarted {
			s.g.Expect(env.StartControllers(s.ctx)).To(gomega.Succeed())
		}
	})
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	latest := s.get(eds)
	s.g.Expect(latest.Status.ObservedGeneration).To(gomega.BeNumerically("<", latest.Generation))
	res := kstatusOf(s.g, latest)
	s.g.Expect(res.Status).To(gomega.Equal(status.InProgressStatus), res.Message)
	health, message := argoHealthOf(s.g, latest)
	s.g.Expect(health).To(gomega.Equal(argocd.Progressing), message)

	s.g.Expect(env.StartControllers(s.ctx)).To(gomega.Succeed())
	restarted = true
	s.expectRolledOut(eds, "v2", nodes)
}
