package e2e

import (
	"slices"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// stepsNodes is the size of the node group a stepped canary runs on, and
// stepNodes the number of canary nodes of each of its steps: 1, 2, then
// 50% of the group.
const stepsNodes = 8

var stepNodes = []int{1, 2, 4}

// canarySteps grows a canary to the stepNodes. Each step lasts a few
// seconds: long enough for its new pods to start and be measured once.
func canarySteps() []v1alpha1.CanaryStep {
	step := func(replicas intstr.IntOrString) v1alpha1.CanaryStep {
		return v1alpha1.CanaryStep{Replicas: replicas, Duration: &metav1.Duration{Duration: 4 * time.Second}}
	}
	return []v1alpha1.CanaryStep{step(intstr.FromInt32(1)), step(intstr.FromInt32(2)), step(intstr.FromString("50%"))}
}

// startSteppedCanary rolls v1 out on a node group of its own with a
// canary of canarySteps judged by analysis, starts recording the status,
// then changes the template to v2 and waits for step 1. It returns the
// agent as written, its nodes, the recorder and the canary at step 1.
func (s *scenario) startSteppedCanary(group string, analysis *v1alpha1.CanaryAnalysis) (
	*v1alpha1.ExtendedDaemonSet, []string, *statusRecorder, *v1alpha1.CanaryStatus,
) {
	s.t.Helper()
	nodes := groupNodeNames(group, stepsNodes)
	s.addNodeGroup(group, nodes...)
	eds := agentEDS(s.ns, "agent", "v1")
	eds.Spec.Template.Spec.NodeSelector = onGroup(group)
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("50%"))
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{Steps: canarySteps(), Analysis: analysis}
	s.create(eds)
	eds, _ = s.expectRolledOut(eds, "v1", nodes)
	statuses, err := recordStatus(s.ctx, eds.Namespace, eds.Name)
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	return s.get(eds), nodes, statuses, s.expectStep(eds, 1).Status.Canary
}

// expectStep waits until the canary of eds's template runs step on its
// number of nodes, and returns the ExtendedDaemonSet as then seen.
func (s *scenario) expectStep(eds *v1alpha1.ExtendedDaemonSet, step int32) *v1alpha1.ExtendedDaemonSet {
	s.t.Helper()
	var latest *v1alpha1.ExtendedDaemonSet
	s.g.Eventually(func(g gomega.Gomega) {
		latest = s.get(eds)
		c := latest.Status.Canary
		g.Expect(c).NotTo(gomega.BeNil(), "no canary")
		g.Expect(c.ReplicaSet).NotTo(gomega.Equal(latest.Status.ActiveReplicaSet), "the canary is active")
		g.Expect(c.Failed).To(gomega.BeFalse(), "canary failed: %s", c.Message)
		g.Expect(c.Step).To(gomega.Equal(step))
		g.Expect(c.Nodes).To(gomega.HaveLen(stepNodes[step-1]))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	return latest
}

// checkStepHistory goes through every stored version of the canary
// replica set's status: its step only goes on, one at a time; it never
// gives a node up nor runs on more than its step's nodes; and it leaves a
// step only after a version showed the step's analysis Successful, the
// record of the step ended Successful with its analysis and its nodes. It
// returns the steps in the order they were seen, and the last version.
func (s *scenario) checkStepHistory(samples []statusSample, canary string) ([]int32, *v1alpha1.CanaryStatus) {
	s.t.Helper()
	var (
		seen       []int32
		last       *v1alpha1.CanaryStatus
		successful bool
	)
	for _, sample := range samples {
		c := sample.Canary
		if c == nil || c.ReplicaSet != canary {
			continue
		}
		s.g.Expect(c.Step).To(gomega.BeNumerically(">=", 1), "step of %v", c)
		s.g.Expect(int(c.Step)).To(gomega.BeNumerically("<=", len(stepNodes)), "step of %v", c)
		s.g.Expect(len(c.Nodes)).To(gomega.BeNumerically("<=", stepNodes[c.Step-1]), "nodes at step %d", c.Step)
		if last != nil {
			s.g.Expect(c.Nodes).To(gomega.ContainElements(last.Nodes), "the canary gave nodes up at step %d", c.Step)
		}
		if last == nil || c.Step != last.Step {
			if last != nil {
				s.g.Expect(c.Step).To(gomega.Equal(last.Step+1), "the canary left step %d for another than the next", last.Step)
				s.g.Expect(successful).To(gomega.BeTrue(), "step %d ended without a Successful analysis", last.Step)
				s.g.Expect(c.Steps).To(gomega.HaveLen(int(c.Step)))
				ended := c.Steps[last.Step-1]
				s.g.Expect(ended.Result).To(gomega.Equal(v1alpha1.CanaryStepSuccessful), "step %d", ended.Step)
				s.g.Expect(ended.Analysis).To(gomega.Equal(v1alpha1.AnalysisSuccessful), "analysis of step %d", ended.Step)
				s.g.Expect(int(ended.Nodes)).To(gomega.Equal(stepNodes[last.Step-1]), "nodes of step %d", ended.Step)
				s.g.Expect(ended.FinishedAt).NotTo(gomega.BeNil(), "end of step %d", ended.Step)
			}
			seen, successful = append(seen, c.Step), false
		}
		successful = successful || (c.Analysis != nil && c.Analysis.Phase == v1alpha1.AnalysisSuccessful)
		last = c
	}
	s.g.Expect(last).NotTo(gomega.BeNil(), "no status of the canary %s recorded", canary)
	return seen, last
}

// A healthy version goes through the three steps, each judged on its own
// measurements by the real Prometheus, its canary growing from 1 node to 2
// then 4 and never giving one up, and is promoted after the last step.
func TestCanaryStepsPromoteStepByStep(t *testing.T) {
	s := newScenario(t)
	m := s.startMetrics()
	m.setTraffic(func(*corev1.Pod) map[string]float64 { return requests(10, 0) })
	analysis := m.analysisOf(errorRateMetric("error-rate", 0.05))
	analysis.InconclusiveLimit = ptr.To[int32](2)
	eds, nodes, statuses, first := s.startSteppedCanary("steps", analysis)

	s.expectPromoted(eds, "v2", nodes, first.ReplicaSet)
	samples, err := statuses.Stop()
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	seen, last := s.checkStepHistory(samples, first.ReplicaSet)
	s.g.Expect(seen).To(gomega.Equal([]int32{1, 2, 3}), "steps the canary went through")
	// Promotion clears the canary from the status: its last version shows
	// the last step as it was promoted, running on its nodes with a
	// Successful analysis.
	s.g.Expect(last.Failed).To(gomega.BeFalse())
	s.g.Expect(last.Steps).To(gomega.HaveLen(len(stepNodes)))
	s.g.Expect(last.Steps[2]).To(gomega.And(gomega.HaveField("Result", v1alpha1.CanaryStepRunning), gomega.HaveField("Nodes", int32(stepNodes[2]))))
	s.g.Expect(last.Analysis).NotTo(gomega.BeNil())
	s.g.Expect(last.Analysis.Phase).To(gomega.Equal(v1alpha1.AnalysisSuccessful), last.Analysis.Message)
	s.g.Expect(s.eventCount(eds, "CanaryStepStarted")).To(gomega.Equal(len(stepNodes)-1), "a step's start is told once")
	s.t.Logf("%d status versions over the canary's steps", len(samples))
}

// A version that is bad on every node but the one step 1 picked passes
// step 1 and fails at step 2, on its error rate in the real Prometheus:
// every canary node, step 1's included, goes back to v1, the stable pods
// are never touched, and the spec stays as written.
func TestCanaryStepsBadVersionFailsAtStep2(t *testing.T) {
	s := newScenario(t)
	m := s.startMetrics()
	m.setTraffic(func(*corev1.Pod) map[string]float64 { return requests(10, 0) })
	analysis := m.analysisOf(errorRateMetric("error-rate", 0.05))
	analysis.InconclusiveLimit = ptr.To[int32](2)
	written, _, statuses, first := s.startSteppedCanary("steps-bad", analysis)
	// Step 2 only adds nodes, so its pods are created after this and
	// serve errors from their first scrape on.
	bad := ofReplicaSet(first.ReplicaSet, requests(10, 0.5), requests(10, 0))
	m.setTraffic(func(pod *corev1.Pod) map[string]float64 {
		if placement.TargetNode(pod) == first.Nodes[0] {
			return requests(10, 0)
		}
		return bad(pod)
	})

	atStep2 := s.expectStep(written, 2)
	c := &analyzedCanary{eds: written, replicaSet: first.ReplicaSet, nodes: atStep2.Status.Canary.Nodes, stable: map[types.UID]string{}}
	s.g.Expect(c.nodes).To(gomega.ContainElement(first.Nodes[0]), "step 2 gave step 1's node up")
	for _, pod := range s.pods(s.g, written) {
		if node := placement.TargetNode(&pod); pod.DeletionTimestamp == nil && !slices.Contains(c.nodes, node) {
			c.stable[pod.UID] = node
		}
	}
	s.expectFailedByAnalysis(c, written, "error-rate", "max 0.05")

	failed := s.get(written).Status.Canary
	s.g.Expect(failed.Step).To(gomega.Equal(int32(2)))
	s.g.Expect(failed.Nodes).To(gomega.ConsistOf(c.nodes))
	s.g.Expect(failed.Steps).To(gomega.HaveLen(2))
	s.g.Expect(failed.Steps[0]).To(gomega.And(gomega.HaveField("Result", v1alpha1.CanaryStepSuccessful),
		gomega.HaveField("Analysis", v1alpha1.AnalysisSuccessful), gomega.HaveField("Nodes", int32(stepNodes[0]))))
	s.g.Expect(failed.Steps[1]).To(gomega.And(gomega.HaveField("Result", v1alpha1.CanaryStepFailed),
		gomega.HaveField("Analysis", v1alpha1.AnalysisFailed), gomega.HaveField("Nodes", int32(stepNodes[1]))))
	s.g.Expect(failed.Steps[1].FinishedAt).NotTo(gomega.BeNil())

	samples, err := statuses.Stop()
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	seen, _ := s.checkStepHistory(samples, first.ReplicaSet)
	s.g.Expect(seen).To(gomega.Equal([]int32{1, 2}), "steps the canary went through")
}
