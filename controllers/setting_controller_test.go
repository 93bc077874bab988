package controllers

import (
	"testing"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

func (s *scenario) newSetting(name, eds string, selector map[string]string, cpu string) *v1alpha1.ExtendedDaemonsetSetting {
	return &v1alpha1.ExtendedDaemonsetSetting{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns},
		Spec: v1alpha1.ExtendedDaemonsetSettingSpec{
			Reference:    &autoscalingv1.CrossVersionObjectReference{Kind: "ExtendedDaemonSet", Name: eds},
			NodeSelector: metav1.LabelSelector{MatchLabels: selector},
			Containers: []v1alpha1.ExtendedDaemonsetSettingContainerSpec{{
				Name: "agent", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
			}},
		},
	}
}

func (s *scenario) getSetting(g gomega.Gomega, name string) *v1alpha1.ExtendedDaemonsetSetting {
	setting := &v1alpha1.ExtendedDaemonsetSetting{}
	g.Expect(k8s.Get(s.ctx, client.ObjectKey{Namespace: s.ns, Name: name}, setting)).To(gomega.Succeed())
	return setting
}

// Settings and node annotations set the resources of the pods created on
// their nodes; conflicting settings are reported and not applied; a
// malformed annotation is reported and skipped.
func TestResourceOverridesLandOnTheRightPods(t *testing.T) {
	s := newScenario(t)
	big := s.createNode("big", map[string]string{"pool": "big"})
	annotated := s.createNode("annotated", map[string]string{"pool": "small"})
	malformed := s.createNode("malformed", map[string]string{"pool": "small"})
	plain := s.createNode("plain", nil)
	s.updateNode(annotated.Name, func(n *corev1.Node) {
		n.Annotations = map[string]string{v1alpha1.NodeResourcesAnnotationPrefix + s.ns + ".agent.agent": `{"requests":{"cpu":"3"}}`}
	})
	s.updateNode(malformed.Name, func(n *corev1.Node) {
		n.Annotations = map[string]string{v1alpha1.NodeResourcesAnnotationPrefix + s.ns + ".agent.agent": `{"requests":`}
	})
	s.create(s.newSetting("big", "agent", map[string]string{"pool": "big"}, "2"))
	s.create(s.newSetting("clash-a", "agent", map[string]string{"pool": "small"}, "5"))
	s.create(s.newSetting("clash-b", "agent", map[string]string{nodeLabel: s.ns, "pool": "small"}, "6"))
	s.g.Eventually(func(g gomega.Gomega) {
		valid := s.getSetting(g, "big")
		g.Expect(valid.Status.Status).To(gomega.Equal(v1alpha1.SettingValid))
		g.Expect(conditions.IsReady(valid)).To(gomega.BeTrue())
		for _, name := range []string{"clash-a", "clash-b"} {
			clash := s.getSetting(g, name)
			g.Expect(clash.Status.Status).To(gomega.Equal(v1alpha1.SettingError))
			g.Expect(clash.Status.Error).To(gomega.ContainSubstring("is also claimed by setting"))
			g.Expect(conditions.IsStalled(clash)).To(gomega.BeTrue())
		}
	}).Should(gomega.Succeed())

	eds := s.newEDS("agent", imageV1)
	s.create(eds)
	pods := s.waitForPods(s.activeReplicaSet(eds.Name), big.Name, annotated.Name, malformed.Name, plain.Name)
	cpuOf := func(node *corev1.Node) string {
		pod := pods[node.Name]
		return pod.Spec.Containers[0].Resources.Requests.Cpu().String()
	}
	s.g.Expect(cpuOf(big)).To(gomega.Equal("2"), "from the setting")
	s.g.Expect(cpuOf(annotated)).To(gomega.Equal("3"), "from the node annotation; the clashing settings are not applied")
	s.g.Expect(cpuOf(malformed)).To(gomega.Equal("0"), "malformed annotation skipped")
	s.g.Expect(cpuOf(plain)).To(gomega.Equal("0"))
	s.g.Eventually(func(g gomega.Gomega) {
		var events eventsv1.EventList
		g.Expect(k8s.List(s.ctx, &events, client.InNamespace(s.ns))).To(gomega.Succeed())
		g.Expect(events.Items).To(gomega.ContainElement(gomega.Satisfy(func(e eventsv1.Event) bool {
			return e.Reason == "InvalidResourceOverride" && e.Type == corev1.EventTypeWarning
		})), "no InvalidResourceOverride event")
	}).Should(gomega.Succeed())

	// The ExtendedDaemonSet says so as long as the annotation is malformed.
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		c := conditions.Get(e, v1alpha1.ResourceOverridesCondition)
		g.Expect(c).NotTo(gomega.BeNil())
		g.Expect(c.Status).To(gomega.Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(gomega.Equal(v1alpha1.ReasonMalformedNodeAnnotation))
		g.Expect(c.Message).To(gomega.ContainSubstring("node " + malformed.Name))
		g.Expect(conditions.IsStalled(e)).To(gomega.BeFalse(), "an ignored annotation does not stall the rollout")
	}).Should(gomega.Succeed())
	s.updateNode(malformed.Name, func(n *corev1.Node) {
		n.Annotations[v1alpha1.NodeResourcesAnnotationPrefix+s.ns+".agent.agent"] = `{"requests":{"cpu":"1"}}`
	})
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(conditions.Has(s.getEDS(g, eds.Name), v1alpha1.ResourceOverridesCondition)).To(gomega.BeFalse())
	}).Should(gomega.Succeed())
}
