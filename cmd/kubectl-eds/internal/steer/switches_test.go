package steer_test

import (
	"fmt"
	"testing"

	"github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

func TestPauseHoldsTheRollingUpdateUntilResumed(t *testing.T) {
	t.Parallel()
	s := rolledOut(t, 2, "agent:v1")
	generation := s.Get(s.G, name).Generation

	expectOK(s, run(s, "pause", name),
		fmt.Sprintf("rolling update of %s paused until %s: no pod is replaced; pods on new nodes are still created", ref(s), command(s, "resume")))
	s.G.Expect(annotations(s)).To(gomega.HaveKeyWithValue(v1alpha1.RollingUpdatePausedAnnotation, "true"))
	s.G.Expect(s.Get(s.G, name).Generation).To(gomega.Equal(generation), "only metadata is written")
	expectOK(s, run(s, "pause", name),
		fmt.Sprintf("rolling update of %s is already paused: %s undoes it", ref(s), command(s, "resume")))

	setImage(s, "agent:v2")
	s.G.Eventually(func(g gomega.Gomega) {
		reconciling := apimeta.FindStatusCondition(s.Get(g, name).Status.Conditions, v1alpha1.ReconcilingCondition)
		g.Expect(reconciling).NotTo(gomega.BeNil())
		g.Expect(reconciling.Reason).To(gomega.Equal(v1alpha1.ReasonRollingUpdatePaused))
	}).Should(gomega.Succeed())
	s.G.Expect(podImages(s.G, s)).To(gomega.Equal(map[string]int{"agent:v1": 2}))

	expectOK(s, run(s, "resume", name), fmt.Sprintf("rolling update of %s resumed", ref(s)))
	s.G.Expect(annotations(s)).NotTo(gomega.HaveKey(v1alpha1.RollingUpdatePausedAnnotation))
	s.WaitRolledOut(name)
	expectOK(s, run(s, "resume", name), fmt.Sprintf("rolling update of %s is not paused: nothing to do", ref(s)))
}

func TestFreezeStopsTheRolloutUntilUnfrozen(t *testing.T) {
	t.Parallel()
	s := rolledOut(t, 2, "agent:v1")

	expectOK(s, run(s, "freeze", name),
		fmt.Sprintf("rollout of %s frozen until %s: no pod is created or deleted", ref(s), command(s, "unfreeze")))
	s.G.Expect(annotations(s)).To(gomega.HaveKeyWithValue(v1alpha1.RolloutFrozenAnnotation, "true"))

	setImage(s, "agent:v2")
	s.G.Eventually(func(g gomega.Gomega) {
		g.Expect(s.Get(g, name).Status.State).To(gomega.Equal(v1alpha1.StateFrozen))
	}).Should(gomega.Succeed())
	s.G.Expect(podImages(s.G, s)).To(gomega.Equal(map[string]int{"agent:v1": 2}))

	expectOK(s, run(s, "unfreeze", name), fmt.Sprintf("rollout of %s unfrozen", ref(s)))
	s.G.Expect(annotations(s)).NotTo(gomega.HaveKey(v1alpha1.RolloutFrozenAnnotation))
	s.WaitRolledOut(name)
}

// The annotation only switches on: what the spec holds on, only its owner
// can switch off.
func TestResumeRefusesWhatTheSpecPauses(t *testing.T) {
	t.Parallel()
	s := env.NewScenario(t)
	eds := s.NewExtendedDaemonSet(name, "agent:v1")
	eds.Spec.Strategy.RollingUpdate.Paused = true
	eds.Spec.Strategy.RollingUpdate.Frozen = true
	s.Create(eds)

	expectRefused(s, run(s, "resume", name),
		fmt.Sprintf("rolling update of %s is paused by spec.strategy.rollingUpdate.paused, which the annotation cannot undo: set it to false where the spec is kept (git)", ref(s)))
	expectRefused(s, run(s, "unfreeze", name),
		fmt.Sprintf("rollout of %s is frozen by spec.strategy.rollingUpdate.frozen", ref(s)))
}
