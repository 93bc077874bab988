package e2e

import (
	"testing"

	"github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// Settings give the pods created on the nodes they select their container
// resources (the test's name is short: the namespace is part of the node
// annotation's key, whose name part holds at most 63 characters), a node annotation wins over them on its node, and two settings
// claiming one node are both in Error and applied nowhere until the clash
// is resolved; pods already running keep their resources until a new
// template replaces them.
func TestResourceOverridesPerNode(t *testing.T) {
	s := newScenario(t)
	const group = "settings"
	big, annotated, plain := "e2e-settings-big", "e2e-settings-annotated", "e2e-settings-plain"
	nodes := []string{big, annotated, plain}
	s.addNodeGroup(group, nodes...)
	s.updateNode(big, func(n *corev1.Node) { n.Labels["pool"] = "big" })
	s.updateNode(annotated, func(n *corev1.Node) {
		n.Labels["pool"] = "big"
		annotate(n, overrideKey(s.ns, "agent", "agent"), `{"requests":{"cpu":"3"}}`)
	})
	s.updateNode(plain, func(n *corev1.Node) { n.Labels["pool"] = "small" })

	s.createSetting("big", map[string]string{"pool": "big"}, "2")
	s.createSetting("clash-a", map[string]string{"pool": "small"}, "5")
	clash := s.createSetting("clash-b", map[string]string{groupLabel: group, "pool": "small"}, "6")
	s.expectSetting("big", v1alpha1.SettingValid, "")
	s.expectSetting("clash-a", v1alpha1.SettingError, "node "+plain+" is also claimed by setting clash-b")
	s.expectSetting("clash-b", v1alpha1.SettingError, "node "+plain+" is also claimed by setting clash-a")

	eds := agentEDS(s.ns, "agent", "v1")
	eds.Spec.Template.Spec.NodeSelector = onGroup(group)
	eds.Spec.Template.Spec.Containers[0].Resources = cpuRequest("100m")
	s.create(eds)
	s.expectRolledOut(eds, "v1", nodes)
	s.expectCPU(eds, map[string]string{big: "2", annotated: "3", plain: "100m"})

	s.g.Expect(env.Client.Delete(s.ctx, clash)).To(gomega.Succeed())
	s.expectSetting("clash-a", v1alpha1.SettingValid, "")
	s.expectPodsKept(eds, holdWindow, func(gomega.Gomega) {})
	s.expectCPU(eds, map[string]string{plain: "100m"})
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	s.expectRolledOut(eds, "v2", nodes)
	s.expectCPU(eds, map[string]string{big: "2", annotated: "3", plain: "5"})
}

// A malformed resource annotation on a node is skipped: the pod there keeps
// the template's resources and the rollout completes, while a Warning event
// and a ResourceOverrides condition on the ExtendedDaemonSet name the node
// and the annotation. Once fixed, the condition goes and the next pods take
// the annotation's resources.
func TestMalformedNodeAnnotationIsReported(t *testing.T) {
	s := newScenario(t)
	const group = "malformed"
	malformed, wellFormed := "e2e-annotation-malformed", "e2e-annotation-wellformed"
	nodes := []string{malformed, wellFormed}
	s.addNodeGroup(group, nodes...)
	key := overrideKey(s.ns, "agent", "agent")
	s.updateNode(malformed, func(n *corev1.Node) { annotate(n, key, `{"requests":`) })
	s.updateNode(wellFormed, func(n *corev1.Node) { annotate(n, key, `{"requests":{"cpu":"3"}}`) })

	eds := agentEDS(s.ns, "agent", "v1")
	eds.Spec.Template.Spec.NodeSelector = onGroup(group)
	eds.Spec.Template.Spec.Containers[0].Resources = cpuRequest("100m")
	s.create(eds)
	_, active := s.expectRolledOut(eds, "v1", nodes)
	s.expectCPU(eds, map[string]string{malformed: "100m", wellFormed: "3"})
	s.expectWarning(active, "InvalidResourceOverride", malformed, key)
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		expectReady(g, latest)
		g.Expect(apimeta.FindStatusCondition(latest.Status.Conditions, v1alpha1.ResourceOverridesCondition)).To(gomega.And(
			gomega.Not(gomega.BeNil()),
			gomega.HaveField("Status", metav1.ConditionFalse),
			gomega.HaveField("Reason", v1alpha1.ReasonMalformedNodeAnnotation),
			gomega.HaveField("Message", gomega.And(gomega.ContainSubstring(malformed), gomega.ContainSubstring(key))),
			gomega.HaveField("Message", gomega.Not(gomega.ContainSubstring(wellFormed))),
		), "ResourceOverrides in %v", latest.Status.Conditions)
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())

	s.updateNode(malformed, func(n *corev1.Node) { annotate(n, key, `{"requests":{"cpu":"4"}}`) })
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		expectReady(g, latest)
		g.Expect(apimeta.FindStatusCondition(latest.Status.Conditions, v1alpha1.ResourceOverridesCondition)).To(gomega.BeNil())
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	s.expectRolledOut(eds, "v2", nodes)
	s.expectCPU(eds, map[string]string{malformed: "4", wellFormed: "3"})
}

// overrideKey is the node annotation overriding a container's resources.
func overrideKey(namespace, eds, container string) string {
	return v1alpha1.NodeResourcesAnnotationPrefix + namespace + "." + eds + "." + container
}

func cpuRequest(cpu string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
}

// createSetting creates a setting giving the agent container of the
// ExtendedDaemonSet "agent" a cpu request on the nodes selector matches.
func (s *scenario) createSetting(name string, selector map[string]string, cpu string) *v1alpha1.ExtendedDaemonsetSetting {
	s.t.Helper()
	setting := &v1alpha1.ExtendedDaemonsetSetting{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns},
		Spec: v1alpha1.ExtendedDaemonsetSettingSpec{
			Reference:    &autoscalingv1.CrossVersionObjectReference{Kind: "ExtendedDaemonSet", Name: "agent"},
			NodeSelector: metav1.LabelSelector{MatchLabels: selector},
			Containers:   []v1alpha1.ExtendedDaemonsetSettingContainerSpec{{Name: "agent", Resources: cpuRequest(cpu)}},
		},
	}
	s.g.Expect(env.Client.Create(s.ctx, setting)).To(gomega.Succeed())
	return setting
}

// expectSetting waits until the setting name reports state, in its
// conditions and for kstatus; an Error must say problem.
func (s *scenario) expectSetting(name string, state v1alpha1.SettingState, problem string) {
	s.t.Helper()
	s.g.Eventually(func(g gomega.Gomega) {
		setting := &v1alpha1.ExtendedDaemonsetSetting{}
		g.Expect(env.Client.Get(s.ctx, client.ObjectKey{Namespace: s.ns, Name: name}, setting)).To(gomega.Succeed())
		g.Expect(setting.Status.ObservedGeneration).To(gomega.Equal(setting.Generation), "observedGeneration")
		g.Expect(setting.Status.Status).To(gomega.Equal(state), "status of %s: %s", name, setting.Status.Error)
		conds := setting.Status.Conditions
		if state == v1alpha1.SettingValid {
			g.Expect(setting.Status.Error).To(gomega.BeEmpty())
			g.Expect(apimeta.IsStatusConditionTrue(conds, v1alpha1.ReadyCondition)).To(gomega.BeTrue(), "Ready in %v", conds)
			g.Expect(apimeta.FindStatusCondition(conds, v1alpha1.StalledCondition)).To(gomega.BeNil())
			g.Expect(kstatusOf(g, setting).Status).To(gomega.Equal(status.CurrentStatus))
			return
		}
		g.Expect(setting.Status.Error).To(gomega.ContainSubstring(problem))
		g.Expect(apimeta.IsStatusConditionFalse(conds, v1alpha1.ReadyCondition)).To(gomega.BeTrue(), "Ready in %v", conds)
		g.Expect(apimeta.FindStatusCondition(conds, v1alpha1.StalledCondition)).To(gomega.And(gomega.Not(gomega.BeNil()),
			gomega.HaveField("Status", metav1.ConditionTrue), gomega.HaveField("Message", gomega.ContainSubstring(problem))))
		g.Expect(kstatusOf(g, setting).Status).To(gomega.Equal(status.FailedStatus))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
}

// expectCPU checks the cpu request of the agent container of the pod of
// eds on each node given.
func (s *scenario) expectCPU(eds *v1alpha1.ExtendedDaemonSet, want map[string]string) {
	s.t.Helper()
	got := map[string]string{}
	for node := range want {
		pod := s.podOn(eds, node)
		got[node] = pod.Spec.Containers[0].Resources.Requests.Cpu().String()
	}
	s.g.Expect(got).To(gomega.Equal(want), "cpu requests by node")
}
