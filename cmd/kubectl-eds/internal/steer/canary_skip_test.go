package steer_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	steering "github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
)

// skip-step moves a canary of two long steps to its second step, then
// past it: promoted.
func TestCanarySkipStepGoesOnThenPromotes(t *testing.T) {
	t.Parallel()
	s, canary := startCanary(t, "agent:v2", func(c *v1alpha1.CanaryStrategy) {
		c.Replicas, c.Duration = nil, nil
		c.Steps = []v1alpha1.CanaryStep{
			{Replicas: intstr.FromInt32(1), Duration: &metav1.Duration{Duration: time.Hour}},
			{Replicas: intstr.FromInt32(2), Duration: &metav1.Duration{Duration: time.Hour}},
		}
	})

	expectOK(s, run(s, "canary", "skip-step", name),
		fmt.Sprintf("step 1 of canary %s of %s skipped: the controller starts step 2 of 2", canary.ReplicaSet, ref(s)))
	s.G.Expect(annotations(s)).To(gomega.HaveKeyWithValue(v1alpha1.CanarySkipStepAnnotation, steering.SkipValue(canary, 1)))
	s.G.Eventually(func(g gomega.Gomega) {
		st := s.Get(g, name).Status
		g.Expect(st.Canary).NotTo(gomega.BeNil())
		g.Expect(st.Canary.Step).To(gomega.BeEquivalentTo(2))
		g.Expect(podImages(g, s)).To(gomega.Equal(map[string]int{"agent:v1": 1, "agent:v2": 2}))
	}).Should(gomega.Succeed())

	expectOK(s, run(s, "canary", "skip-step", name),
		fmt.Sprintf("step 2 of canary %s of %s skipped: the controller promotes it", canary.ReplicaSet, ref(s)))
	s.G.Expect(s.WaitRolledOut(name).Status.ActiveReplicaSet).To(gomega.Equal(canary.ReplicaSet))
}

func TestCanarySkipStepRefusesACanaryWithoutSteps(t *testing.T) {
	t.Parallel()
	s, canary := runningCanary(t)
	expectRefused(s, run(s, "canary", "skip-step", name),
		fmt.Sprintf("canary %s of %s has no steps (spec.strategy.canary.steps): %s promotes it", canary.ReplicaSet, ref(s), command(s, "canary validate")))
	s.G.Expect(annotations(s)).NotTo(gomega.HaveKey(v1alpha1.CanarySkipStepAnnotation))
}

// A retried canary is a new instance of the same replica set: the skip of
// its first step left behind by the failed one does not skip it, and
// skip-step run again writes a value naming the new instance, which does.
func TestCanarySkipStepActsOnTheRetriedInstanceAlone(t *testing.T) {
	t.Parallel()
	s, first := startCanary(t, "agent:v2", func(c *v1alpha1.CanaryStrategy) {
		c.Replicas, c.Duration = nil, nil
		c.Steps = []v1alpha1.CanaryStep{
			{Replicas: intstr.FromInt32(1), Duration: &metav1.Duration{Duration: time.Hour}},
			{Replicas: intstr.FromInt32(2), Duration: &metav1.Duration{Duration: time.Hour}},
		}
	})
	stepOf := func(g gomega.Gomega) *v1alpha1.CanaryStatus {
		c := s.Get(g, name).Status.Canary
		g.Expect(c).NotTo(gomega.BeNil())
		return c
	}
	s.G.Expect(run(s, "canary", "skip-step", name).Code).To(gomega.BeZero())
	s.G.Eventually(func(g gomega.Gomega) { g.Expect(stepOf(g).Step).To(gomega.BeEquivalentTo(2)) }).Should(gomega.Succeed())
	s.G.Expect(run(s, "canary", "fail", name).Code).To(gomega.BeZero())
	s.G.Eventually(func(g gomega.Gomega) { g.Expect(stepOf(g).Failed).To(gomega.BeTrue()) }).Should(gomega.Succeed())
	s.G.Expect(run(s, "canary", "retry", name).Code).To(gomega.BeZero())

	var retried *v1alpha1.CanaryStatus
	s.G.Eventually(func(g gomega.Gomega) {
		retried = stepOf(g)
		g.Expect(retried.Failed).To(gomega.BeFalse())
	}).Should(gomega.Succeed())
	s.G.Expect(retried.ReplicaSet).To(gomega.Equal(first.ReplicaSet))
	s.G.Expect(retried.Instance).NotTo(gomega.Equal(first.Instance))
	s.G.Consistently(func(g gomega.Gomega) {
		g.Expect(stepOf(g).Step).To(gomega.BeEquivalentTo(1), "skipped by the skip-step given to the failed canary")
	}).Should(gomega.Succeed())

	expectOK(s, run(s, "canary", "skip-step", name),
		fmt.Sprintf("step 1 of canary %s of %s skipped: the controller starts step 2 of 2", first.ReplicaSet, ref(s)))
	s.G.Expect(annotations(s)).To(gomega.HaveKeyWithValue(v1alpha1.CanarySkipStepAnnotation, steering.SkipValue(retried, 1)))
	s.G.Eventually(func(g gomega.Gomega) { g.Expect(stepOf(g).Step).To(gomega.BeEquivalentTo(2)) }).Should(gomega.Succeed())
}
