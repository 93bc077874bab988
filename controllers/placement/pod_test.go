package placement

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNewPodPinsTheTemplateToItsNode(t *testing.T) {
	g := gomega.NewWithT(t)
	podAffinity := &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "kubernetes.io/hostname"}}}
	preferred := []corev1.PreferredSchedulingTerm{{Weight: 5, Preference: corev1.NodeSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}},
	}}}
	tmpl := &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{"app": "agent", "overridden": "template"},
			Annotations: map[string]string{"note": "kept"},
		},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"agent": "yes"},
			Containers:   []corev1.Container{{Name: "agent", Image: "pause"}},
			Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}},
			Affinity: &corev1.Affinity{
				NodeAffinity: &corev1.NodeAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
						{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpExists}}},
						{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "rack", Operator: corev1.NodeSelectorOpExists}}},
					}},
					PreferredDuringSchedulingIgnoredDuringExecution: preferred,
				},
				PodAffinity: podAffinity,
			},
		},
	}
	before := tmpl.DeepCopy()

	pod := NewPod(tmpl, "node-1", map[string]string{"owner": "ers", "overridden": "controller"})
	g.Expect(tmpl).To(gomega.Equal(before), "the template was modified")
	g.Expect(pod.Labels).To(gomega.Equal(map[string]string{"app": "agent", "owner": "ers", "overridden": "controller"}))
	g.Expect(pod.Annotations).To(gomega.Equal(map[string]string{"note": "kept"}))
	g.Expect(pod.Spec.NodeName).To(gomega.BeEmpty(), "the scheduler binds the pod")
	g.Expect(pod.Spec.NodeSelector).To(gomega.Equal(tmpl.Spec.NodeSelector))
	g.Expect(pod.Spec.Containers).To(gomega.Equal(tmpl.Spec.Containers))
	g.Expect(pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution).To(gomega.Equal(&corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
			Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"node-1"},
		}}}},
	}), "one term on the node name, or the ORed template terms would let the pod land elsewhere")
	g.Expect(pod.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution).To(gomega.Equal(preferred))
	g.Expect(pod.Spec.Affinity.PodAffinity).To(gomega.Equal(podAffinity))
	g.Expect(pod.Spec.Tolerations).To(gomega.Equal(WithDaemonTolerations(tmpl.Spec.Tolerations, false)))
	g.Expect(TargetNode(pod)).To(gomega.Equal("node-1"))

	// The pod is a copy: changing it leaves the template alone.
	pod.Labels["app"] = "changed"
	pod.Spec.Containers[0].Image = "changed"
	g.Expect(tmpl).To(gomega.Equal(before))
}

// A template naming a node (stored before the API refused it) must not bind
// every pod to that one node.
func TestNewPodIgnoresTheTemplatesNodeName(t *testing.T) {
	g := gomega.NewWithT(t)
	tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeName: "node-3", Containers: []corev1.Container{{Name: "agent", Image: "agent"}}}}
	pod := NewPod(tmpl, "node-1", nil)
	g.Expect(pod.Spec.NodeName).To(gomega.BeEmpty())
	g.Expect(TargetNode(pod)).To(gomega.Equal("node-1"))
	g.Expect(tmpl.Spec.NodeName).To(gomega.Equal("node-3"), "the template is left as it was")
}

func TestNewPodFromABareTemplate(t *testing.T) {
	g := gomega.NewWithT(t)
	tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{HostNetwork: true, Containers: []corev1.Container{{Name: "cni", Image: "cni"}}}}
	pod := NewPod(tmpl, "node-2", map[string]string{"owner": "ers"})
	g.Expect(pod.Labels).To(gomega.Equal(map[string]string{"owner": "ers"}))
	g.Expect(tmpl.Labels).To(gomega.BeNil())
	g.Expect(tmpl.Spec.Affinity).To(gomega.BeNil())
	g.Expect(TargetNode(pod)).To(gomega.Equal("node-2"))
	g.Expect(pod.Spec.Tolerations).To(gomega.ContainElement(gomega.HaveField("Key", corev1.TaintNodeNetworkUnavailable)))
}

func TestTargetNode(t *testing.T) {
	pinned := func(terms ...corev1.NodeSelectorTerm) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
		}}
	}
	field := func(op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: op, Values: values}}}
	}
	for _, tc := range []struct {
		name string
		spec corev1.PodSpec
		want string
	}{
		{"bound", corev1.PodSpec{NodeName: "bound"}, "bound"},
		{"binding wins over affinity", corev1.PodSpec{NodeName: "bound", Affinity: pinned(field(corev1.NodeSelectorOpIn, "pinned"))}, "bound"},
		{"pinned", corev1.PodSpec{Affinity: pinned(field(corev1.NodeSelectorOpIn, "pinned"))}, "pinned"},
		{"pinned in a later term", corev1.PodSpec{Affinity: pinned(corev1.NodeSelectorTerm{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpExists}},
		}, field(corev1.NodeSelectorOpIn, "pinned"))}, "pinned"},
		{"several names", corev1.PodSpec{Affinity: pinned(field(corev1.NodeSelectorOpIn, "a", "b"))}, ""},
		{"NotIn", corev1.PodSpec{Affinity: pinned(field(corev1.NodeSelectorOpNotIn, "a"))}, ""},
		{"another field", corev1.PodSpec{Affinity: pinned(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
			Key: "metadata.uid", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"},
		}}})}, ""},
		{"no affinity", corev1.PodSpec{}, ""},
		{"no node affinity", corev1.PodSpec{Affinity: &corev1.Affinity{}}, ""},
		{"no required node affinity", corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gomega.NewWithT(t).Expect(TargetNode(&corev1.Pod{Spec: tc.spec})).To(gomega.Equal(tc.want))
		})
	}
}

func TestReadySince(t *testing.T) {
	created := metav1.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	readyAt := metav1.NewTime(created.Add(time.Minute))
	pod := func(conds ...corev1.PodCondition) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: created}, Status: corev1.PodStatus{Conditions: conds}}
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want metav1.Time
	}{
		{"ready", pod(
			corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
			corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: readyAt},
		), readyAt},
		{"ready without a transition time counts from creation", pod(corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue}), created},
		{"not ready", pod(corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: readyAt}), metav1.Time{}},
		{"ready unknown", pod(corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionUnknown, LastTransitionTime: readyAt}), metav1.Time{}},
		{"containers ready is not pod ready", pod(corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: readyAt}), metav1.Time{}},
		{"no condition", pod(), metav1.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ReadySince(tc.pod)
			gomega.NewWithT(t).Expect(got.Equal(&tc.want)).To(gomega.BeTrue(), "got %v, want %v", got, tc.want)
		})
	}
}

func TestPodReady(t *testing.T) {
	pod := func(conds ...corev1.PodCondition) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Conditions: conds}}
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"ready", pod(corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue}), true},
		{"not ready", pod(corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse}), false},
		{"ready unknown", pod(corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionUnknown}), false},
		{"containers ready is not pod ready", pod(corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionTrue}), false},
		{"no condition", pod(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gomega.NewWithT(t).Expect(PodReady(tc.pod)).To(gomega.Equal(tc.want))
		})
	}
}

func TestUnschedulable(t *testing.T) {
	g := gomega.NewWithT(t)
	pod := func(c corev1.PodCondition) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{c}}}
	}
	g.Expect(Unschedulable(pod(corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}))).To(gomega.BeTrue())
	g.Expect(Unschedulable(pod(corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "SchedulingGated"}))).To(gomega.BeFalse())
	g.Expect(Unschedulable(pod(corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}))).To(gomega.BeFalse())
	g.Expect(Unschedulable(&corev1.Pod{})).To(gomega.BeFalse())
}
