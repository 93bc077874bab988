package canary

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// A template change while no node runs the template (a node pool scaled to
// zero) is no canary: it is promoted at once, saying why, instead of
// waiting for pods that cannot exist and holding every later change.
func TestStepPromotesAtOnceWhenNoNodeRunsTheTemplate(t *testing.T) {
	for name, strategy := range map[string]*v1alpha1.CanaryStrategy{
		"a duration":   {Duration: dur(10 * time.Minute)},
		"steps":        {Steps: []v1alpha1.CanaryStep{{Replicas: intstr.FromInt32(1), Duration: dur(time.Minute)}, {Replicas: intstr.FromString("50%"), Duration: dur(time.Minute)}}},
		"manual":       {ValidationMode: v1alpha1.CanaryValidationManual},
		"a percentage": {Replicas: &intstr.IntOrString{Type: intstr.String, StrVal: "10%"}, Duration: dur(time.Minute)},
	} {
		t.Run(name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			in := stepInput(0, strategy)
			in.Status, in.Candidates, in.Desired, in.Pods, in.Ready = nil, nil, 0, nil, false
			res := expectOutcome(g, in, outcome{promote: true, transition: Promoted})
			g.Expect(res.Status.Reason).To(gomega.Equal(ReasonNothingToCanary))
			g.Expect(res.Status.Message).To(gomega.ContainSubstring("no node"))
		})
	}
}

// A failure stands even with nothing to canary: a person's fail is never
// turned into a promotion.
func TestStepNothingToCanaryStillFailsWhenFailed(t *testing.T) {
	g := gomega.NewWithT(t)
	in := stepInput(time.Minute, &v1alpha1.CanaryStrategy{Duration: dur(10 * time.Minute)})
	in.Candidates, in.Desired, in.Pods, in.Ready = nil, 0, nil, false
	in.Annotations = map[string]string{v1alpha1.CanaryFailedAnnotation: "rs-2"}
	expectOutcome(g, in, outcome{failed: true, reason: ReasonManual, transition: Failed})
}

// A canary that cannot find nodes says what is true: no node matches its
// nodeSelector, or the nodes that do are unhealthy.
func TestStepWaitingForNodesSaysWhy(t *testing.T) {
	g := gomega.NewWithT(t)
	strategy := &v1alpha1.CanaryStrategy{NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "canary"}}}
	in := stepInput(time.Minute, strategy)
	in.Status.Nodes, in.Candidates = nil, nil
	res := expectOutcome(g, in, outcome{reason: ReasonWaitingForNodes})
	g.Expect(res.Status.Message).To(gomega.ContainSubstring("matches the canary nodeSelector"))
	g.Expect(res.Status.Message).NotTo(gomega.ContainSubstring("not Ready"))

	in = stepInput(time.Minute, strategy)
	in.Status.Nodes = nil
	for i := range in.Candidates {
		in.Candidates[i].Unhealthy = "the node is cordoned"
	}
	res = expectOutcome(g, in, outcome{reason: ReasonWaitingForNodes})
	g.Expect(res.Status.Message).To(gomega.ContainSubstring("3 candidate nodes"))
	g.Expect(res.Status.Message).To(gomega.ContainSubstring("cordoned"))
}

// A canary waiting for nodes wakes up when its progress deadline passes,
// which stalls it (see WaitingForNodesPastDeadline).
func TestStepWaitingForNodesWakesAtTheProgressDeadline(t *testing.T) {
	g := gomega.NewWithT(t)
	in := stepInput(50*time.Second, &v1alpha1.CanaryStrategy{})
	in.Status.Nodes, in.Candidates = nil, nil
	in.ProgressDeadline = time.Minute
	res := expectOutcome(g, in, outcome{reason: ReasonWaitingForNodes})
	g.Expect(res.RequeueAfter).To(gomega.Equal(10 * time.Second))
	g.Expect(WaitingForNodesPastDeadline(res.Status, time.Minute, in.Now)).To(gomega.BeFalse())
	g.Expect(WaitingForNodesPastDeadline(res.Status, time.Minute, in.Now.Add(10*time.Second))).To(gomega.BeTrue())
	g.Expect(WaitingForNodesPastDeadline(res.Status, 2*time.Minute, in.Now.Add(10*time.Second))).To(gomega.BeFalse())
}
