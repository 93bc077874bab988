package overrides

import (
	"testing"

	"github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

func setting(name, eds string, selector map[string]string, container, cpu string) v1alpha1.ExtendedDaemonsetSetting {
	return v1alpha1.ExtendedDaemonsetSetting{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ExtendedDaemonsetSettingSpec{
			Reference:    &autoscalingv1.CrossVersionObjectReference{Kind: "ExtendedDaemonSet", Name: eds},
			NodeSelector: metav1.LabelSelector{MatchLabels: selector},
			Containers: []v1alpha1.ExtendedDaemonsetSettingContainerSpec{{
				Name: container, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
			}},
		},
	}
}

func node(name string, labels, annotations map[string]string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations}}
}

var template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent"}, {Name: "sidecar"}}}}

func TestValidate(t *testing.T) {
	g := gomega.NewWithT(t)
	n1, n2 := node("n1", map[string]string{"pool": "big", "zone": "a"}, nil), node("n2", map[string]string{"pool": "small"}, nil)
	nodes := []*corev1.Node{&n1, &n2}
	settings := []v1alpha1.ExtendedDaemonsetSetting{
		setting("big", "agent", map[string]string{"pool": "big"}, "agent", "2"),
		setting("zone-a", "agent", map[string]string{"zone": "a"}, "agent", "1"),
		setting("small", "agent", map[string]string{"pool": "small"}, "agent", "100m"),
		setting("other-eds", "logs", map[string]string{"pool": "big"}, "agent", "1"),
		setting("typo", "agent", map[string]string{"pool": "none"}, "agnet", "1"),
	}
	errs := Validate(settings, nodes, map[string]*corev1.PodTemplateSpec{"agent": template})
	g.Expect(errs).To(gomega.HaveKey("big"))
	g.Expect(errs["big"]).To(gomega.MatchError(gomega.ContainSubstring("node n1 is also claimed by setting zone-a")))
	g.Expect(errs["zone-a"]).To(gomega.MatchError(gomega.ContainSubstring("node n1 is also claimed by setting big")))
	g.Expect(errs["typo"]).To(gomega.MatchError(gomega.ContainSubstring(`container "agnet" is not in the pod template`)))
	g.Expect(errs).NotTo(gomega.HaveKey("small"))
	g.Expect(errs).NotTo(gomega.HaveKey("other-eds"), "settings of different ExtendedDaemonSets may share nodes")

	bad := setting("bad", "agent", nil, "agent", "1")
	bad.Spec.NodeSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "pool", Operator: "Sometimes"}}
	noRef := setting("noref", "", nil, "agent", "1")
	noRef.Spec.Reference = nil
	errs = Validate([]v1alpha1.ExtendedDaemonsetSetting{bad, noRef}, nodes, nil)
	g.Expect(errs["bad"]).To(gomega.MatchError(gomega.ContainSubstring("spec.nodeSelector")))
	g.Expect(errs["noref"]).To(gomega.MatchError(gomega.ContainSubstring("spec.reference.name")))
}

func TestForNodeAnnotationWinsOverSetting(t *testing.T) {
	g := gomega.NewWithT(t)
	n := node("n1", map[string]string{"pool": "big"}, map[string]string{
		v1alpha1.NodeResourcesAnnotationPrefix + "ns.agent.sidecar":  `{"limits":{"memory":"1Gi"}}`,
		v1alpha1.NodeResourcesAnnotationPrefix + "ns.agent.agent":    `{"requests":{"cpu":"3"}}`,
		v1alpha1.NodeResourcesAnnotationPrefix + "other.agent.agent": `{"requests":{"cpu":"9"}}`,
	})
	got, err := ForNode("ns", "agent", &n, []v1alpha1.ExtendedDaemonsetSetting{setting("big", "agent", map[string]string{"pool": "big"}, "agent", "2")})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(cpu(got["agent"])).To(gomega.Equal("3"))
	g.Expect(mem(got["sidecar"])).To(gomega.Equal("1Gi"))

	pod := &corev1.Pod{Spec: *template.Spec.DeepCopy()}
	Apply(pod, got)
	g.Expect(pod.Spec.Containers[0].Resources.Requests.Cpu().String()).To(gomega.Equal("3"))
	g.Expect(pod.Spec.Containers[1].Resources.Limits.Memory().String()).To(gomega.Equal("1Gi"))
}

func TestForNodeSkipsMalformedAnnotations(t *testing.T) {
	g := gomega.NewWithT(t)
	n := node("n1", map[string]string{"pool": "big"}, map[string]string{
		v1alpha1.NodeResourcesAnnotationPrefix + "ns.agent.agent": `{"requests":`,
	})
	got, err := ForNode("ns", "agent", &n, []v1alpha1.ExtendedDaemonsetSetting{setting("big", "agent", map[string]string{"pool": "big"}, "agent", "2")})
	g.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("node n1: ignoring malformed resource overrides: annotation resources.extendeddaemonset.io/ns.agent.agent")))
	g.Expect(cpu(got["agent"])).To(gomega.Equal("2"), "the setting still applies")
}

func cpu(r corev1.ResourceRequirements) string { return r.Requests.Cpu().String() }
func mem(r corev1.ResourceRequirements) string { return r.Limits.Memory().String() }

func TestCheckNodeAnnotations(t *testing.T) {
	g := gomega.NewWithT(t)
	good := node("good", nil, map[string]string{v1alpha1.NodeResourcesAnnotationPrefix + "ns.agent.main": `{"requests":{"cpu":"1"}}`})
	bad := node("bad", nil, map[string]string{v1alpha1.NodeResourcesAnnotationPrefix + "ns.agent.main": `{"requests":`})
	other := node("other", nil, map[string]string{v1alpha1.NodeResourcesAnnotationPrefix + "ns.other.main": `not json`})

	g.Expect(CheckNodeAnnotations("ns", "agent", []corev1.Node{good, other})).To(gomega.Succeed(), "another ExtendedDaemonSet's annotation is not ours to judge")
	err := CheckNodeAnnotations("ns", "agent", []corev1.Node{good, bad, other})
	g.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("node bad")))
	g.Expect(err.Error()).To(gomega.ContainSubstring(v1alpha1.NodeResourcesAnnotationPrefix + "ns.agent.main"))
	g.Expect(err.Error()).NotTo(gomega.ContainSubstring("node good"))
}

func TestAnnotatedExtendedDaemonSets(t *testing.T) {
	g := gomega.NewWithT(t)
	n := node("n", nil, map[string]string{
		v1alpha1.NodeResourcesAnnotationPrefix + "ns.agent.main":           "{}",
		v1alpha1.NodeResourcesAnnotationPrefix + "ns.agent.sidecar":        "{}",
		v1alpha1.NodeResourcesAnnotationPrefix + "ns.agent.with.dots.main": "{}",
		v1alpha1.NodeResourcesAnnotationPrefix + "nodots":                  "{}",
		"example.com/unrelated":                                            "x",
	})
	refs := AnnotatedExtendedDaemonSets(&n)
	g.Expect(refs).To(gomega.ConsistOf(
		gomega.HaveField("Name", "agent"),
		gomega.HaveField("Name", "agent.with.dots"),
	))
	for _, r := range refs {
		g.Expect(r.Namespace).To(gomega.Equal("ns"))
	}
}
