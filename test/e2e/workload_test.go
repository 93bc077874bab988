package e2e

import (
	"slices"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers"
)

// agentDaemonSet is an apps/v1 DaemonSet of the agent at version on the
// nodes of group, updated OnDelete as a workloadRef requires.
func agentDaemonSet(namespace, name, group, version string) *appsv1.DaemonSet {
	labels := map[string]string{"app": name}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.DaemonSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: labels},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: onGroup(group),
					Containers:   []corev1.Container{{Name: "agent", Image: agentImage(version)}},
				},
			},
		},
	}
}

// referencing is an ExtendedDaemonSet that rolls out ds's pods.
func referencing(ds *appsv1.DaemonSet, canary *v1alpha1.CanaryStrategy) *v1alpha1.ExtendedDaemonSet {
	eds := &v1alpha1.ExtendedDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: ds.Name, Namespace: ds.Namespace},
		Spec: v1alpha1.ExtendedDaemonSetSpec{
			WorkloadRef: &v1alpha1.WorkloadRef{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name},
		},
	}
	eds.Spec.Strategy.Canary = canary
	return eds
}

// setDaemonSetVersion changes ds's template to version, as a person
// changing it in git would.
func (s *scenario) setDaemonSetVersion(ds *appsv1.DaemonSet, version string) {
	s.t.Helper()
	s.g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(s.ctx, client.ObjectKeyFromObject(ds), ds); err != nil {
			return err
		}
		ds.Spec.Template.Spec.Containers[0].Image = agentImage(version)
		return env.Client.Update(s.ctx, ds)
	})).To(gomega.Succeed())
}

// versionsOn maps each node of ds's live pods to the agent version it runs.
func (s *scenario) versionsOn(g gomega.Gomega, ds *appsv1.DaemonSet) map[string]string {
	out := map[string]string{}
	for _, pod := range s.daemonSetPods(g, ds) {
		if pod.DeletionTimestamp == nil {
			out[pod.Spec.NodeName] = pod.Spec.Containers[0].Image
		}
	}
	return out
}

// expectDaemonSetOn waits until every node of nodes runs one live, Ready
// pod of ds at version, and no other node runs one.
func (s *scenario) expectDaemonSetOn(ds *appsv1.DaemonSet, version string, nodes []string) {
	s.t.Helper()
	s.g.Eventually(func(g gomega.Gomega) {
		pods := s.daemonSetPods(g, ds)
		var on []string
		for _, pod := range pods {
			g.Expect(pod.DeletionTimestamp).To(gomega.BeNil(), "pod %s terminating", pod.Name)
			g.Expect(pod.Spec.Containers[0].Image).To(gomega.Equal(agentImage(version)), "pod %s", pod.Name)
			g.Expect(podReady(&pod)).To(gomega.BeTrue(), "pod %s ready", pod.Name)
			on = append(on, pod.Spec.NodeName)
		}
		g.Expect(on).To(gomega.ConsistOf(nodes))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// expectNeverWritten checks that the controller wrote nothing of ds: no
// field of it is managed by the controller, and its generation is the
// user's last change.
func (s *scenario) expectNeverWritten(ds *appsv1.DaemonSet, generation int64) {
	s.t.Helper()
	latest := &appsv1.DaemonSet{}
	s.g.Expect(env.Client.Get(s.ctx, client.ObjectKeyFromObject(ds), latest)).To(gomega.Succeed())
	s.g.Expect(latest.Generation).To(gomega.Equal(generation), "the DaemonSet's spec changed")
	for _, m := range latest.ManagedFields {
		s.g.Expect(m.Manager).NotTo(gomega.Equal(controllers.FieldOwner), "the controller wrote the DaemonSet: %+v", m)
	}
}

// An ExtendedDaemonSet whose workloadRef names an OnDelete DaemonSet, with
// the native DaemonSet controller running: a template change of the
// DaemonSet runs on the canary's node first (its pod deleted, recreated by
// the DaemonSet at the new revision), every other node keeps the old one
// until the canary is promoted, then the rolling update takes them all
// within maxUnavailable. The DaemonSet is never written.
func TestWorkloadRefCanaryPromotes(t *testing.T) {
	s := newScenario(t)
	const group = "workload-promote"
	nodes := []string{"e2e-workload-promote-0", "e2e-workload-promote-1", "e2e-workload-promote-2", "e2e-workload-promote-3"}
	s.addNodeGroup(group, nodes...)
	ds := agentDaemonSet(s.ns, "agent", group, "v1")
	s.g.Expect(env.Client.Create(s.ctx, ds)).To(gomega.Succeed())
	s.expectDaemonSetOn(ds, "v1", nodes)

	eds := s.create(referencing(ds, &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(1)), Duration: &metav1.Duration{Duration: 10 * time.Second},
	}))
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		g.Expect(kstatusOf(g, latest).Status).To(gomega.Equal(status.CurrentStatus))
		g.Expect(latest.Status.Desired).To(gomega.BeEquivalentTo(len(nodes)))
		g.Expect(latest.Status.UpToDate).To(gomega.BeEquivalentTo(len(nodes)))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	stable := s.get(eds).Status.ActiveReplicaSet

	s.setDaemonSetVersion(ds, "v2")
	generation := ds.Generation
	var canaryNodes []string
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		g.Expect(latest.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(latest.Status.Canary.Nodes).To(gomega.HaveLen(1))
		g.Expect(apimeta.FindStatusCondition(latest.Status.Conditions, v1alpha1.ReconcilingCondition)).To(
			gomega.HaveField("Reason", v1alpha1.ReasonCanaryRunning))
		canaryNodes = latest.Status.Canary.Nodes
		versions := s.versionsOn(g, ds)
		g.Expect(versions).To(gomega.HaveKeyWithValue(canaryNodes[0], agentImage("v2")))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	// While the canary runs, the other nodes keep the stable revision.
	s.g.Consistently(func(g gomega.Gomega) {
		latest := s.get(eds)
		if latest.Status.Canary == nil {
			return // promoted meanwhile
		}
		for node, image := range s.versionsOn(g, ds) {
			if !slices.Contains(canaryNodes, node) {
				g.Expect(image).To(gomega.Equal(agentImage("v1")), "node %s left the stable revision during the canary", node)
			}
		}
	}).WithTimeout(5 * time.Second).WithPolling(pollInterval).Should(gomega.Succeed())

	s.expectDaemonSetOn(ds, "v2", nodes)
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		g.Expect(latest.Status.Canary).To(gomega.BeNil())
		g.Expect(latest.Status.ActiveReplicaSet).NotTo(gomega.Equal(stable))
		g.Expect(kstatusOf(g, latest).Status).To(gomega.Equal(status.CurrentStatus))
		g.Expect(latest.Status.UpToDate).To(gomega.BeEquivalentTo(len(nodes)))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	s.expectEvent(eds, "CanaryPromoted")
	s.expectNeverWritten(ds, generation)
}

// A canary of a DaemonSet's new revision that fails stops everything: no
// pod beyond the canary's node is deleted, the ExtendedDaemonSet is
// Stalled, naming the node that keeps the failed revision and saying that
// reverting the DaemonSet's template returns it. The revert does, at once,
// without a canary.
func TestWorkloadRefFailedCanaryHoldsUntilReverted(t *testing.T) {
	s := newScenario(t)
	const group = "workload-fail"
	nodes := []string{"e2e-workload-fail-0", "e2e-workload-fail-1", "e2e-workload-fail-2"}
	s.addNodeGroup(group, nodes...)
	ds := agentDaemonSet(s.ns, "agent", group, "v1")
	s.g.Expect(env.Client.Create(s.ctx, ds)).To(gomega.Succeed())
	s.expectDaemonSetOn(ds, "v1", nodes)
	eds := s.create(referencing(ds, &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(1)), Duration: &metav1.Duration{Duration: 5 * time.Minute},
		AutoFail: &v1alpha1.CanaryAutoFail{MaxRestarts: ptr.To[int32](2)},
	}))
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(kstatusOf(g, s.get(eds)).Status).To(gomega.Equal(status.CurrentStatus))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())

	s.setDaemonSetVersion(ds, "v2")
	var canaryNode string
	var canaryPod corev1.Pod
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		g.Expect(latest.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(latest.Status.Canary.Nodes).To(gomega.HaveLen(1))
		canaryNode = latest.Status.Canary.Nodes[0]
		found := false
		for _, pod := range s.daemonSetPods(g, ds) {
			if pod.Spec.NodeName == canaryNode && pod.DeletionTimestamp == nil && pod.Spec.Containers[0].Image == agentImage("v2") {
				canaryPod, found = pod, true
			}
		}
		g.Expect(found).To(gomega.BeTrue(), "the DaemonSet recreated the canary node's pod at v2")
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	stableUIDs := map[string]string{}
	s.g.Eventually(func(g gomega.Gomega) {
		for _, pod := range s.daemonSetPods(g, ds) {
			if pod.Spec.NodeName != canaryNode {
				stableUIDs[pod.Spec.NodeName] = string(pod.UID)
			}
		}
		g.Expect(stableUIDs).To(gomega.HaveLen(len(nodes) - 1))
	}).Should(gomega.Succeed())

	// The agent crash-loops on the canary's node, as a kubelet reports.
	s.g.Eventually(func() error {
		latest := &corev1.Pod{}
		if err := env.Client.Get(s.ctx, client.ObjectKeyFromObject(&canaryPod), latest); err != nil {
			return err
		}
		for i := range latest.Status.ContainerStatuses {
			latest.Status.ContainerStatuses[i].RestartCount = 5
		}
		return env.Client.Status().Update(s.ctx, latest)
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())

	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		stalled := apimeta.FindStatusCondition(latest.Status.Conditions, v1alpha1.StalledCondition)
		g.Expect(stalled).NotTo(gomega.BeNil())
		g.Expect(stalled.Reason).To(gomega.Equal(v1alpha1.ReasonCanaryFailed))
		g.Expect(stalled.Message).To(gomega.And(gomega.ContainSubstring(canaryNode), gomega.ContainSubstring("reverted")))
		g.Expect(kstatusOf(g, latest).Status).To(gomega.Equal(status.FailedStatus))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	// Nothing else moves: a pod deleted would come back at the failed revision.
	s.g.Consistently(func(g gomega.Gomega) {
		for _, pod := range s.daemonSetPods(g, ds) {
			if pod.Spec.NodeName != canaryNode {
				g.Expect(string(pod.UID)).To(gomega.Equal(stableUIDs[pod.Spec.NodeName]), "pod on %s replaced", pod.Spec.NodeName)
				g.Expect(pod.DeletionTimestamp).To(gomega.BeNil(), "pod on %s deleted", pod.Spec.NodeName)
			}
		}
	}).WithTimeout(10 * time.Second).WithPolling(pollInterval).Should(gomega.Succeed())

	// Reverted in git: the canary's node returns at once, without a canary.
	s.setDaemonSetVersion(ds, "v1")
	s.expectDaemonSetOn(ds, "v1", nodes)
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		g.Expect(latest.Status.Canary).To(gomega.BeNil())
		g.Expect(kstatusOf(g, latest).Status).To(gomega.Equal(status.CurrentStatus))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	for _, pod := range s.daemonSetPods(s.g, ds) {
		if pod.Spec.NodeName != canaryNode {
			s.g.Expect(string(pod.UID)).To(gomega.Equal(stableUIDs[pod.Spec.NodeName]), "stable pod on %s replaced by the revert", pod.Spec.NodeName)
		}
	}
}

// A DaemonSet left on RollingUpdate would roll every change out itself:
// the ExtendedDaemonSet naming it is Stalled, saying which field to set.
func TestWorkloadRefStallsOnARollingUpdateDaemonSet(t *testing.T) {
	s := newScenario(t)
	const group = "workload-rolling"
	nodes := []string{"e2e-workload-rolling-0"}
	s.addNodeGroup(group, nodes...)
	ds := agentDaemonSet(s.ns, "agent", group, "v1")
	ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType}
	s.g.Expect(env.Client.Create(s.ctx, ds)).To(gomega.Succeed())
	eds := s.create(referencing(ds, nil))
	s.expectStalled(eds, v1alpha1.ReasonInvalidSpec, "spec.updateStrategy.type", "OnDelete")
	s.expectNeverWritten(ds, 1)
}
