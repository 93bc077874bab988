package steer_test

import (
	"fmt"
	"testing"

	"github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/clitest"
	steering "github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
)

func TestCanaryValidatePromotesTheCanary(t *testing.T) {
	t.Parallel()
	s, canary := runningCanary(t)

	expectOK(s, run(s, "canary", "validate", name),
		fmt.Sprintf("canary %s of %s validated: the controller promotes it", canary.ReplicaSet, ref(s)))
	s.G.Expect(annotations(s)).To(gomega.HaveKeyWithValue(v1alpha1.CanaryValidatedAnnotation, steering.SteeringValue(canary)))

	eds := s.WaitRolledOut(name)
	s.G.Expect(eds.Status.ActiveReplicaSet).To(gomega.Equal(canary.ReplicaSet))
	s.G.Eventually(func(g gomega.Gomega) {
		g.Expect(podImages(g, s)).To(gomega.Equal(map[string]int{"agent:v2": 3}))
	}).Should(gomega.Succeed())
}

func TestCanaryFailSendsItsNodesBackAndRetryStartsItAgain(t *testing.T) {
	t.Parallel()
	s, canary := runningCanary(t)
	active := s.Get(s.G, name).Status.ActiveReplicaSet

	expectOK(s, run(s, "canary", "fail", name),
		fmt.Sprintf("canary %s of %s failed: its nodes go back to the active template (%s); %s starts it again",
			canary.ReplicaSet, ref(s), active, command(s, "canary retry")))
	s.G.Expect(annotations(s)).To(gomega.HaveKeyWithValue(v1alpha1.CanaryFailedAnnotation, steering.SteeringValue(canary)))
	s.G.Eventually(func(g gomega.Gomega) {
		st := s.Get(g, name).Status
		g.Expect(st.State).To(gomega.Equal(v1alpha1.StateCanaryFailed))
		g.Expect(st.Canary).NotTo(gomega.BeNil())
		g.Expect(st.Canary.Failed).To(gomega.BeTrue())
		g.Expect(st.Canary.Reason).To(gomega.Equal("FailedByUser"))
		g.Expect(podImages(g, s)).To(gomega.Equal(map[string]int{"agent:v1": 3}))
	}).Should(gomega.Succeed())

	expectRefused(s, run(s, "canary", "validate", name),
		fmt.Sprintf("canary %s of %s has already failed (FailedByUser: the canary was failed by a person): only %s acts on it now",
			canary.ReplicaSet, ref(s), command(s, "canary retry")))
	history := run(s, "history", name)
	s.G.Expect(history.Code).To(gomega.BeZero())
	s.G.Expect(history.Out).To(gomega.MatchRegexp(`(?m)^2 +%s +failed canary +agent=agent:v2 `, canary.ReplicaSet))

	expectOK(s, run(s, "canary", "retry", name),
		fmt.Sprintf("canary %s of %s retried: the controller starts it again", canary.ReplicaSet, ref(s)))
	after := annotations(s)
	s.G.Expect(after).NotTo(gomega.HaveKey(v1alpha1.CanaryFailedAnnotation), "nothing is left behind")
	s.G.Expect(after).To(gomega.HaveKey(v1alpha1.CanaryRetryAnnotation))
	s.G.Eventually(func(g gomega.Gomega) {
		st := s.Get(g, name).Status
		g.Expect(st.Canary).NotTo(gomega.BeNil())
		g.Expect(st.Canary.ReplicaSet).To(gomega.Equal(canary.ReplicaSet))
		g.Expect(st.Canary.Failed).To(gomega.BeFalse())
		g.Expect(podImages(g, s)).To(gomega.Equal(map[string]int{"agent:v1": 2, "agent:v2": 1}))
	}).Should(gomega.Succeed())
}

func TestCanaryPauseHoldsItUntilUnpaused(t *testing.T) {
	t.Parallel()
	s, canary := runningCanary(t)

	expectOK(s, run(s, "canary", "pause", name),
		fmt.Sprintf("canary %s of %s paused: it keeps its nodes, and its pods neither promote nor fail it until %s",
			canary.ReplicaSet, ref(s), command(s, "canary unpause")))
	s.G.Expect(annotations(s)).To(gomega.HaveKeyWithValue(v1alpha1.CanaryPausedAnnotation, "true"))
	s.G.Eventually(func(g gomega.Gomega) {
		st := s.Get(g, name).Status
		g.Expect(st.State).To(gomega.Equal(v1alpha1.StateCanaryPaused))
		g.Expect(st.Canary.Paused).To(gomega.BeTrue())
		g.Expect(st.Canary.Reason).To(gomega.Equal("PausedByUser"))
	}).Should(gomega.Succeed())
	expectOK(s, run(s, "canary", "pause", name),
		fmt.Sprintf("canary %s of %s is already paused: %s lets it go on", canary.ReplicaSet, ref(s), command(s, "canary unpause")))
	expectRefused(s, run(s, "canary", "retry", name),
		fmt.Sprintf("canary %s of %s has not failed: there is nothing to retry", canary.ReplicaSet, ref(s)))

	expectOK(s, run(s, "canary", "unpause", name),
		fmt.Sprintf("canary %s of %s unpaused: the controller judges it again", canary.ReplicaSet, ref(s)))
	s.G.Expect(annotations(s)).NotTo(gomega.HaveKey(v1alpha1.CanaryPausedAnnotation))
	s.G.Eventually(func(g gomega.Gomega) {
		st := s.Get(g, name).Status
		g.Expect(st.State).To(gomega.Equal(v1alpha1.StateCanary))
		g.Expect(st.Canary.Paused).To(gomega.BeFalse())
	}).Should(gomega.Succeed())
	expectRefused(s, run(s, "canary", "unpause", name),
		fmt.Sprintf("canary %s of %s is not paused: there is nothing to unpause", canary.ReplicaSet, ref(s)))
}

// A canary autoPause stopped goes on once a person unpauses it: the
// annotation names its replica set, and overrides autoPause for it alone.
func TestCanaryUnpauseOverridesAutoPause(t *testing.T) {
	t.Parallel()
	s, canary := startCanary(t, "agent:v2-"+clitest.CrashTag, func(c *v1alpha1.CanaryStrategy) {
		c.AutoPause = &v1alpha1.CanaryAutoPause{Enabled: ptr.To(true), MaxRestarts: ptr.To[int32](1)}
	})
	var paused *v1alpha1.CanaryStatus
	s.G.Eventually(func(g gomega.Gomega) {
		paused = s.Get(g, name).Status.Canary
		g.Expect(paused.Paused).To(gomega.BeTrue())
	}).Should(gomega.Succeed())
	s.G.Expect(paused.Reason).NotTo(gomega.Equal("PausedByUser"))

	expectOK(s, run(s, "canary", "unpause", name),
		fmt.Sprintf("canary %s of %s unpaused: the controller lets it go on despite its auto-pause (%s: %s)",
			canary.ReplicaSet, ref(s), paused.Reason, paused.Message))
	s.G.Expect(annotations(s)).To(gomega.HaveKeyWithValue(v1alpha1.CanaryUnpausedAnnotation, steering.SteeringValue(canary)))
	s.G.Eventually(func(g gomega.Gomega) {
		st := s.Get(g, name).Status
		g.Expect(st.State).To(gomega.Equal(v1alpha1.StateCanary))
		g.Expect(st.Canary.Paused).To(gomega.BeFalse())
	}).Should(gomega.Succeed())
}

// A person's validation ends the pause they asked for: left behind, the
// annotation would pause the next canary.
func TestCanaryValidateOfAPausedCanaryLiftsThePause(t *testing.T) {
	t.Parallel()
	s, canary := runningCanary(t)
	s.G.Expect(run(s, "canary", "pause", name).Code).To(gomega.BeZero())

	expectOK(s, run(s, "canary", "validate", name),
		fmt.Sprintf("canary %s of %s validated: the controller promotes it (%s is removed with it, or it would pause the next canary)",
			canary.ReplicaSet, ref(s), v1alpha1.CanaryPausedAnnotation))
	s.G.Expect(annotations(s)).NotTo(gomega.HaveKey(v1alpha1.CanaryPausedAnnotation))
	s.G.Expect(s.WaitRolledOut(name).Status.ActiveReplicaSet).To(gomega.Equal(canary.ReplicaSet))
}

func TestCanaryCommandsRefuseWithoutACanary(t *testing.T) {
	t.Parallel()
	s := rolledOut(t, 1, "agent:v1")
	before := annotations(s)

	for _, verb := range []string{"validate", "pause", "unpause", "fail"} {
		expectRefused(s, run(s, "canary", verb, name),
			fmt.Sprintf("no canary runs for %s: there is nothing to %s; a canary starts when the pod template changes and spec.strategy.canary is set, and %s shows where the rollout is",
				ref(s), verb, command(s, "status")))
	}
	expectRefused(s, run(s, "canary", "retry", name),
		fmt.Sprintf("no canary of %s has failed: there is nothing to retry; %s shows where the rollout is", ref(s), command(s, "status")))
	s.G.Expect(annotations(s)).To(gomega.Equal(before))
}
