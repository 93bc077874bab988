package controllers

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// stepsRun is a canary with steps followed as kubelets would: the pods the
// canary adds with each step are run, the ones it leaves are kept.
type stepsRun struct {
	s      *scenario
	eds    *v1alpha1.ExtendedDaemonSet
	stable map[string]corev1.Pod
	// canaryPods are the canary's running pods, by node.
	canaryPods map[string]corev1.Pod
	canaryRS   string
}

func (s *scenario) startSteps(steps []v1alpha1.CanaryStep, nodes int) (*stepsRun, string) {
	s.t.Helper()
	var created []*corev1.Node
	for i := range nodes {
		created = append(created, s.createNode(fmt.Sprintf("n%d", i), nil))
	}
	eds := s.newEDS("agent", imageV1)
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{Steps: steps}
	first, stable := s.createRolledOut(eds, created...)
	s.setImage(eds, imageV2)
	return &stepsRun{s: s, eds: eds, stable: stable, canaryPods: map[string]corev1.Pod{}}, first
}

// reach waits for the canary to be at step with want nodes, keeping the
// nodes of the steps before, and runs the pods of the nodes it added.
func (r *stepsRun) reach(step int32, want int) *v1alpha1.ExtendedDaemonSet {
	r.s.t.Helper()
	var nodes []string
	r.s.g.Eventually(func(g gomega.Gomega) {
		c := r.s.getEDS(g, r.eds.Name).Status.Canary
		g.Expect(c).NotTo(gomega.BeNil())
		g.Expect(c.Step).To(gomega.Equal(step))
		g.Expect(c.Nodes).To(gomega.HaveLen(want))
		r.canaryRS, nodes = c.ReplicaSet, c.Nodes
	}).WithTimeout(time.Minute).Should(gomega.Succeed())
	for node := range r.canaryPods {
		r.s.g.Expect(nodes).To(gomega.ContainElement(node), "a node of an earlier step left the canary")
	}
	for _, node := range nodes {
		if _, ok := r.canaryPods[node]; !ok {
			r.canaryPods[node] = r.s.replaceOnNode(r.stable[node], r.canaryRS)
			delete(r.stable, node)
		}
	}
	e := r.s.getEDS(r.s.g, r.eds.Name)
	r.s.g.Expect(conditions.GetMessage(e, v1alpha1.CanaryCondition)).To(gomega.ContainSubstring(fmt.Sprintf("step %d of ", step)))
	return e
}

// promoted waits for the canary to be the active template, and rolls it
// out on the nodes left.
func (r *stepsRun) promoted() {
	r.s.t.Helper()
	r.s.g.Eventually(func(g gomega.Gomega) {
		e := r.s.getEDS(g, r.eds.Name)
		g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(r.canaryRS))
		g.Expect(e.Status.Canary).To(gomega.BeNil())
	}).WithTimeout(time.Minute).Should(gomega.Succeed())
	var rest []corev1.Pod
	for _, pod := range r.stable {
		rest = append(rest, pod)
	}
	r.s.replaceInAnyOrder(rest, r.canaryRS)
	r.s.g.Eventually(func(g gomega.Gomega) { expectRolledOut(g, r.s.getEDS(g, r.eds.Name)) }).Should(gomega.Succeed())
}

func stepOf(replicas int32, d time.Duration) v1alpha1.CanaryStep {
	return v1alpha1.CanaryStep{Replicas: intstr.FromInt32(replicas), Duration: &metav1.Duration{Duration: d}}
}

// A canary of three short steps grows on its own, one step at a time,
// keeping the nodes of each step, reported in progress all along, and is
// promoted after the last.
func TestCanaryStepsAdvanceThenPromote(t *testing.T) {
	s := newScenario(t)
	r, first := s.startSteps([]v1alpha1.CanaryStep{stepOf(1, 2*time.Second), stepOf(2, 2*time.Second), stepOf(3, 2*time.Second)}, 4)
	for step := range int32(3) {
		e := r.reach(step+1, int(step)+1)
		s.g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(first), "promoted before its last step")
		s.g.Expect(conditions.GetReason(e, v1alpha1.ReconcilingCondition)).To(gomega.Equal(v1alpha1.ReasonCanaryRunning))
		s.g.Expect(kstatus(s.g, e)).To(gomega.Equal(status.InProgressStatus))
		for i, rec := range e.Status.Canary.Steps[:step] {
			s.g.Expect(rec.Result).To(gomega.Equal(v1alpha1.CanaryStepSuccessful), "step %d", i+1)
		}
	}
	r.promoted()
}

// A person moves a canary on: skip-step leaves one step (a long one, then
// a pause step), and validate promotes the canary from any step.
func TestCanaryStepsSkipAndValidate(t *testing.T) {
	s := newScenario(t)
	r, first := s.startSteps([]v1alpha1.CanaryStep{
		stepOf(1, time.Hour), {Replicas: intstr.FromInt32(2), Pause: true}, stepOf(3, time.Hour),
	}, 4)
	r.reach(1, 1)
	s.annotate(r.eds, v1alpha1.CanarySkipStepAnnotation, "1")
	r.reach(2, 2)
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, r.eds.Name)
		g.Expect(e.Status.Canary.Paused).To(gomega.BeTrue())
		g.Expect(e.Status.Canary.Steps[0].Result).To(gomega.Equal(v1alpha1.CanaryStepSkipped))
		g.Expect(conditions.GetMessage(e, v1alpha1.CanaryCondition)).To(gomega.ContainSubstring("waits for a person"))
	}).Should(gomega.Succeed())
	s.annotate(r.eds, v1alpha1.CanarySkipStepAnnotation, strconv.Itoa(2))
	e := r.reach(3, 3)
	s.g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(first))
	s.annotate(r.eds, v1alpha1.CanaryValidatedAnnotation, r.canaryRS)
	r.promoted()
}

// A canary failed at its second step sends every canary node, the first
// step's included, back to the active template.
func TestCanaryStepsFailureReturnsEveryNode(t *testing.T) {
	s := newScenario(t)
	r, first := s.startSteps([]v1alpha1.CanaryStep{stepOf(1, 2*time.Second), stepOf(3, time.Hour)}, 4)
	r.reach(1, 1)
	r.reach(2, 3)
	s.annotate(r.eds, v1alpha1.CanaryFailedAnnotation, r.canaryRS)
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, r.eds.Name)
		g.Expect(e.Status.Canary.Failed).To(gomega.BeTrue())
		g.Expect(e.Status.Canary.Steps[1].Result).To(gomega.Equal(v1alpha1.CanaryStepFailed))
		g.Expect(conditions.GetMessage(e, v1alpha1.StalledCondition)).To(gomega.ContainSubstring("at step 2"))
		g.Expect(kstatus(g, e)).To(gomega.Equal(status.FailedStatus))
	}).Should(gomega.Succeed())
	// Back within maxUnavailable, in the order the controller chooses.
	var back []corev1.Pod
	for _, pod := range r.canaryPods {
		back = append(back, pod)
	}
	s.replaceInAnyOrder(back, first)
	s.g.Expect(s.getEDS(s.g, r.eds.Name).Status.ActiveReplicaSet).To(gomega.Equal(first))
}
