package placement

import (
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func node(name string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
}

func taint(key string, effect corev1.TaintEffect) corev1.Taint {
	return corev1.Taint{Key: key, Value: "v", Effect: effect}
}

func template(change func(*corev1.PodSpec)) *corev1.PodTemplateSpec {
	t := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "pause"}}}}
	if change != nil {
		change(&t.Spec)
	}
	return t
}

var (
	runs     = Fit{ShouldRun: true, ShouldContinueRunning: true}
	stays    = Fit{ShouldContinueRunning: true}
	excluded = Fit{}
)

func TestNodeFitSelectorAndAffinity(t *testing.T) {
	selector := template(func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"agent": "yes"} })
	affinity := template(func(s *corev1.PodSpec) {
		s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
				{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}}},
				{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"special"}}}},
			}},
			// Preferences do not exclude a node.
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: corev1.NodeSelectorTerm{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}},
			}}},
		}}
	})
	both := template(func(s *corev1.PodSpec) {
		s.NodeSelector = map[string]string{"agent": "yes"}
		s.Affinity = affinity.Spec.Affinity
	})
	badAffinity := template(func(s *corev1.PodSpec) {
		s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
				{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: "Bogus", Values: []string{"a"}}}},
			}},
		}}
	})
	for _, tc := range []struct {
		name     string
		template *corev1.PodTemplateSpec
		node     *corev1.Node
		want     Fit
	}{
		{"no constraint", template(nil), node("n", nil), runs},
		{"selector matches", selector, node("n", map[string]string{"agent": "yes", "other": "x"}), runs},
		{"selector value differs", selector, node("n", map[string]string{"agent": "no"}), excluded},
		{"selector label missing", selector, node("n", nil), excluded},
		{"affinity expression matches", affinity, node("n", map[string]string{"zone": "b"}), runs},
		{"affinity expression differs", affinity, node("n", map[string]string{"zone": "c"}), excluded},
		{"affinity field matches (terms are ORed)", affinity, node("special", nil), runs},
		{"selector and affinity both needed", both, node("n", map[string]string{"zone": "a"}), excluded},
		{"selector and affinity both met", both, node("n", map[string]string{"zone": "a", "agent": "yes"}), runs},
		{"an affinity that does not parse matches nothing", badAffinity, node("n", map[string]string{"zone": "a"}), excluded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gomega.NewWithT(t).Expect(NodeFit(tc.template, tc.node)).To(gomega.Equal(tc.want))
		})
	}
}

func TestNodeFitTaints(t *testing.T) {
	plain := template(nil)
	hostNetwork := template(func(s *corev1.PodSpec) { s.HostNetwork = true })
	tolerant := template(func(s *corev1.PodSpec) {
		s.Tolerations = []corev1.Toleration{
			{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "v", Effect: corev1.TaintEffectNoSchedule},
			{Key: "evict", Operator: corev1.TolerationOpExists},
		}
	})
	everything := template(func(s *corev1.PodSpec) { s.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}} })
	for _, tc := range []struct {
		name     string
		template *corev1.PodTemplateSpec
		taints   []corev1.Taint
		want     Fit
	}{
		{"untolerated NoSchedule keeps a running pod but places none", plain, []corev1.Taint{taint("dedicated", corev1.TaintEffectNoSchedule)}, stays},
		{"untolerated NoExecute excludes", plain, []corev1.Taint{taint("dedicated", corev1.TaintEffectNoExecute)}, excluded},
		{"NoExecute wins over NoSchedule", plain, []corev1.Taint{
			taint("a", corev1.TaintEffectNoSchedule), taint("b", corev1.TaintEffectNoExecute),
		}, excluded},
		{"PreferNoSchedule does not exclude", plain, []corev1.Taint{taint("dedicated", corev1.TaintEffectPreferNoSchedule)}, runs},
		{"template toleration", tolerant, []corev1.Taint{
			taint("dedicated", corev1.TaintEffectNoSchedule), taint("evict", corev1.TaintEffectNoExecute),
		}, runs},
		{"toleration of another value", tolerant, []corev1.Taint{{Key: "dedicated", Value: "w", Effect: corev1.TaintEffectNoSchedule}}, stays},
		{"toleration of another effect", tolerant, []corev1.Taint{taint("dedicated", corev1.TaintEffectNoExecute)}, excluded},
		{"tolerate everything", everything, []corev1.Taint{
			taint("a", corev1.TaintEffectNoSchedule), taint("b", corev1.TaintEffectNoExecute),
		}, runs},

		// The standard DaemonSet tolerations.
		{"not-ready NoExecute", plain, []corev1.Taint{taint(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute)}, runs},
		{"unreachable NoExecute", plain, []corev1.Taint{taint(corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute)}, runs},
		{"disk pressure", plain, []corev1.Taint{taint(corev1.TaintNodeDiskPressure, corev1.TaintEffectNoSchedule)}, runs},
		{"memory pressure", plain, []corev1.Taint{taint(corev1.TaintNodeMemoryPressure, corev1.TaintEffectNoSchedule)}, runs},
		{"pid pressure", plain, []corev1.Taint{taint(corev1.TaintNodePIDPressure, corev1.TaintEffectNoSchedule)}, runs},
		{"unschedulable (cordoned)", plain, []corev1.Taint{taint(corev1.TaintNodeUnschedulable, corev1.TaintEffectNoSchedule)}, runs},
		// The node lifecycle's NoSchedule taints on a node that is not
		// Ready: the node still should run the agent (its pod waits for
		// it), or a node the rollout took down would stop counting against
		// maxUnavailable. The same keys with NoExecute stay tolerated, and
		// a taint the user set keeps a running pod but places none.
		{"not-ready NoSchedule keeps the node", plain, []corev1.Taint{taint(corev1.TaintNodeNotReady, corev1.TaintEffectNoSchedule)}, runs},
		{"unreachable NoSchedule and NoExecute keep the node", plain, []corev1.Taint{
			taint(corev1.TaintNodeUnreachable, corev1.TaintEffectNoSchedule), taint(corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute),
		}, runs},
		{"unreachable beside a user's NoSchedule taint", plain, []corev1.Taint{
			taint(corev1.TaintNodeUnreachable, corev1.TaintEffectNoSchedule), taint("dedicated", corev1.TaintEffectNoSchedule),
		}, stays},
		{"disk pressure NoExecute is not tolerated", plain, []corev1.Taint{taint(corev1.TaintNodeDiskPressure, corev1.TaintEffectNoExecute)}, excluded},
		{"network unavailable, pod network", plain, []corev1.Taint{taint(corev1.TaintNodeNetworkUnavailable, corev1.TaintEffectNoSchedule)}, stays},
		{"network unavailable, host network", hostNetwork, []corev1.Taint{taint(corev1.TaintNodeNetworkUnavailable, corev1.TaintEffectNoSchedule)}, runs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gomega.NewWithT(t).Expect(NodeFit(tc.template, node("n", nil, tc.taints...))).To(gomega.Equal(tc.want))
		})
	}
}

func TestNodeFitLeavesTheTemplateAlone(t *testing.T) {
	g := gomega.NewWithT(t)
	tmpl := template(func(s *corev1.PodSpec) {
		s.Tolerations = make([]corev1.Toleration, 1, 10) // spare capacity an append could write into
		s.Tolerations[0] = corev1.Toleration{Key: "mine", Operator: corev1.TolerationOpExists}
	})
	before := tmpl.DeepCopy()
	NodeFit(tmpl, node("n", nil, taint("dedicated", corev1.TaintEffectNoSchedule)))
	g.Expect(tmpl).To(gomega.Equal(before))
	g.Expect(tmpl.Spec.Tolerations[:2][1]).To(gomega.Equal(corev1.Toleration{}), "the spare capacity was written")
}

func TestWithDaemonTolerations(t *testing.T) {
	g := gomega.NewWithT(t)
	g.Expect(WithDaemonTolerations(nil, false)).To(gomega.Equal(daemonTolerations))
	withHost := WithDaemonTolerations(nil, true)
	g.Expect(withHost).To(gomega.HaveLen(len(daemonTolerations) + 1))
	g.Expect(withHost).To(gomega.ContainElement(corev1.Toleration{
		Key: corev1.TaintNodeNetworkUnavailable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule,
	}))
	g.Expect(daemonTolerations).To(gomega.HaveLen(6), "the shared list was not modified")

	// Tolerations already present are not repeated; the user's come first.
	own := []corev1.Toleration{
		{Key: "mine", Operator: corev1.TolerationOpExists},
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	}
	out := WithDaemonTolerations(own, false)
	g.Expect(out).To(gomega.HaveLen(1 + len(daemonTolerations)))
	g.Expect(out[:2]).To(gomega.Equal(own))
	g.Expect(own).To(gomega.HaveLen(2))
}
