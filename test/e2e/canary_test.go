package e2e

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// A healthy auto canary runs the new template on its nodes only, then is
// promoted once its duration has elapsed, and the rolling update takes
// every other node.
func TestCanaryHappyPathPromotes(t *testing.T) {
	s := newScenario(t)
	nodes := s.nodeNames()
	eds := agentEDS(s.ns, "agent", "v1")
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(2)), Duration: &metav1.Duration{Duration: 10 * time.Second},
	}
	s.create(eds)
	s.expectRolledOut(eds, "v1", nodes)

	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	var canary string
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		g.Expect(latest.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(latest.Status.Canary.Nodes).To(gomega.HaveLen(2))
		g.Expect(apimeta.FindStatusCondition(latest.Status.Conditions, v1alpha1.ReconcilingCondition)).To(
			gomega.HaveField("Reason", v1alpha1.ReasonCanaryRunning))
		g.Expect(latest.Status.State).To(gomega.Equal(v1alpha1.StateCanary))
		g.Expect(kstatusOf(g, latest).Status).To(gomega.Equal(status.InProgressStatus))
		canary = latest.Status.Canary.ReplicaSet
		var onCanary, onStable []string
		for _, pod := range s.pods(g, eds) {
			if pod.DeletionTimestamp != nil {
				continue
			}
			if pod.Spec.Containers[0].Image == agentImage("v2") {
				onCanary = append(onCanary, pod.Spec.NodeName)
			} else {
				onStable = append(onStable, pod.Spec.NodeName)
			}
		}
		g.Expect(onCanary).To(gomega.ConsistOf(latest.Status.Canary.Nodes))
		g.Expect(onStable).To(gomega.ConsistOf(without(nodes, latest.Status.Canary.Nodes...)))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())

	latest, active := s.expectRolledOut(eds, "v2", nodes)
	s.g.Expect(active.Name).To(gomega.Equal(canary))
	s.g.Expect(latest.Status.Canary).To(gomega.BeNil())
	s.expectEvent(eds, "CanaryStarted", canary)
	s.expectEvent(eds, "CanaryPromoted", canary)
}
