package controllers

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// canaryRun is an ExtendedDaemonSet rolled out with a first template whose
// second template runs as a manual canary, which waits for a person, so a
// test decides when it ends.
type canaryRun struct {
	eds *v1alpha1.ExtendedDaemonSet
	// active is the first template's replica set, stable its pods by node.
	active string
	stable map[string]corev1.Pod
	// canary is the second template's replica set, nodes its canary nodes.
	canary string
	nodes  []string
}

// startManualCanary rolls an ExtendedDaemonSet out on nodes, then changes
// its template and waits for the canary on replicas of them.
func (s *scenario) startManualCanary(replicas intstr.IntOrString, nodes ...string) canaryRun {
	s.t.Helper()
	var created []*corev1.Node
	for _, n := range nodes {
		created = append(created, s.createNode(n, nil))
	}
	run := canaryRun{eds: s.newEDS("agent", imageV1)}
	run.eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{Replicas: &replicas, ValidationMode: v1alpha1.CanaryValidationManual}
	run.active, run.stable = s.createRolledOut(run.eds, created...)
	s.setImage(run.eds, imageV2)
	run.canary, run.nodes = s.runningCanary(run.eds.Name)
	return run
}

// runningCanary waits for the canary of eds and returns its replica set and
// nodes.
func (s *scenario) runningCanary(name string) (string, []string) {
	s.t.Helper()
	var rs string
	var nodes []string
	s.g.Eventually(func(g gomega.Gomega) {
		c := s.getEDS(g, name).Status.Canary
		g.Expect(c).NotTo(gomega.BeNil())
		g.Expect(c.Nodes).NotTo(gomega.BeEmpty())
		rs, nodes = c.ReplicaSet, c.Nodes
	}).Should(gomega.Succeed())
	return rs, nodes
}

// A canary replaces the pods of its nodes under maxUnavailable, as the
// rolling update does: with maxUnavailable 1 and a canary on half of four
// nodes, the second canary node keeps its agent until the first one runs
// the canary.
func TestCanaryReplacesItsPodsUnderMaxUnavailable(t *testing.T) {
	s := newScenario(t)
	run := s.startManualCanary(intstr.FromString("50%"), "a", "b", "c", "d")
	stable, second, canaryNodes := run.stable, run.canary, run.nodes
	s.g.Expect(canaryNodes).To(gomega.HaveLen(2))
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.gone(g, ptr.To(stable[canaryNodes[0]])) || s.gone(g, ptr.To(stable[canaryNodes[1]]))).To(gomega.BeTrue())
	}).Should(gomega.Succeed())
	replaced, waiting := stable[canaryNodes[0]], stable[canaryNodes[1]]
	if !s.gone(s.g, &replaced) {
		replaced, waiting = waiting, replaced
	}
	s.g.Consistently(func(g gomega.Gomega) {
		g.Expect(s.gone(g, &waiting)).To(gomega.BeFalse(), "two canary nodes without an agent at once, maxUnavailable 1")
	}, 2*time.Second).Should(gomega.Succeed())
	s.replaceOnNode(replaced, second)
	s.replaceOnNode(waiting, second)
	for node, pod := range stable {
		if node != canaryNodes[0] && node != canaryNodes[1] {
			s.g.Expect(s.gone(s.g, &pod)).To(gomega.BeFalse(), "a pod off the canary nodes was replaced")
		}
	}
}

// A failed template stays failed when the canary strategy is removed: only
// a new template or a retry rolls it out.
func TestFailedTemplateStaysFailedWithoutACanaryStrategy(t *testing.T) {
	s := newScenario(t)
	s.expectFailedStaysFailedWithoutACanaryStrategy(s.startManualCanary(intstr.FromInt32(1), "a", "b"))
}

// Retries given while the canary ran, through the spec and the annotation,
// were handled then: once the canary strategy is gone, what is left of them
// (the annotation's) asks for no retry of the failure that came after.
func TestRetriesHandledBeforeAFailureDoNotRollItOutWithoutACanaryStrategy(t *testing.T) {
	s := newScenario(t)
	run := s.startManualCanary(intstr.FromInt32(1), "a", "b")
	s.updateEDS(run.eds, func(e *v1alpha1.ExtendedDaemonSet) { e.Spec.Strategy.Canary.Retry = "spec-1" })
	s.annotate(run.eds, v1alpha1.CanaryRetryAnnotation, "annotation-1")
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.getEDS(g, run.eds.Name).Status.LastHandledRetry).To(gomega.Equal("spec-1/annotation-1"))
	}).Should(gomega.Succeed())
	s.expectFailedStaysFailedWithoutACanaryStrategy(run)
}

// expectFailedStaysFailedWithoutACanaryStrategy fails the running canary
// of run, removes the canary strategy, and expects the failed template to
// stay off every node until a retry is asked for.
func (s *scenario) expectFailedStaysFailedWithoutACanaryStrategy(run canaryRun) {
	s.t.Helper()
	eds, active, stable, second, canaryNodes := run.eds, run.active, run.stable, run.canary, run.nodes
	s.annotate(eds, v1alpha1.CanaryFailedAnnotation, second)
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(conditions.GetReason(s.getEDS(g, eds.Name), v1alpha1.StalledCondition)).To(gomega.Equal(v1alpha1.ReasonCanaryFailed))
	}).Should(gomega.Succeed())

	s.updateEDS(eds, func(e *v1alpha1.ExtendedDaemonSet) { e.Spec.Strategy.Canary = nil })
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.getEDS(g, eds.Name).Status.ObservedGeneration).To(gomega.Equal(eds.Generation))
	}).Should(gomega.Succeed())
	s.g.Consistently(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(active), "the failed template was rolled out")
		g.Expect(conditions.GetReason(e, v1alpha1.StalledCondition)).To(gomega.Equal(v1alpha1.ReasonCanaryFailed))
	}, 2*time.Second).Should(gomega.Succeed())
	for node, pod := range stable {
		if node != canaryNodes[0] {
			s.g.Expect(s.gone(s.g, &pod)).To(gomega.BeFalse(), "a pod of the stable template was replaced")
		}
	}

	s.annotate(eds, v1alpha1.CanaryRetryAnnotation, "1")
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.getEDS(g, eds.Name).Status.ActiveReplicaSet).To(gomega.Equal(second))
	}).Should(gomega.Succeed())
}

// Deleting the active replica set while a canary runs does not promote the
// canary: it goes on being judged.
func TestCanaryIsNotSkippedWhenTheActiveReplicaSetGoes(t *testing.T) {
	s := newScenario(t)
	run := s.startManualCanary(intstr.FromInt32(1), "a", "b")
	eds, active, second := run.eds, run.active, run.canary

	s.g.Expect(k8s.Delete(s.ctx, s.getERS(s.g, active))).To(gomega.Succeed())
	s.g.Consistently(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.ActiveReplicaSet).NotTo(gomega.Equal(second), "the canary was promoted without validation")
		g.Expect(e.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(e.Status.Canary.ReplicaSet).To(gomega.Equal(second))
	}, 3*time.Second).Should(gomega.Succeed())
	s.annotate(eds, v1alpha1.CanaryValidatedAnnotation, second)
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.getEDS(g, eds.Name).Status.ActiveReplicaSet).To(gomega.Equal(second))
	}).Should(gomega.Succeed())
}

// A rolling update without progress past progressDeadlineSeconds is
// Stalled, naming the node and why; progress clears it.
func TestProgressDeadlineStallsAndClears(t *testing.T) {
	s := newScenario(t)
	node := s.createNode("a", nil)
	eds := s.newEDS("agent", imageV1)
	eds.Spec.ProgressDeadlineSeconds = ptr.To[int32](2)
	_, stable := s.createRolledOut(eds, node)

	s.setImage(eds, imageV2)
	second := s.activeReplicaSet(eds.Name, stable[node.Name].Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel])
	// The old pod stays terminating: no kubelet confirms it.
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(conditions.GetReason(e, v1alpha1.StalledCondition)).To(gomega.Equal(v1alpha1.ReasonProgressDeadlineExceeded))
		g.Expect(conditions.GetMessage(e, v1alpha1.StalledCondition)).To(gomega.ContainSubstring(node.Name + " (pod " + stable[node.Name].Name + " terminating)"))
		g.Expect(kstatus(g, e)).To(gomega.Equal(status.FailedStatus))
	}).Should(gomega.Succeed())

	// The new pod never becomes ready: stalled again, for that reason.
	pod := stable[node.Name]
	s.finishDeletion(&pod)
	next := s.podOn(second, node.Name)
	s.setPodStatus(next.Name, func(st *corev1.PodStatus) {
		st.Phase = corev1.PodPending
		st.ContainerStatuses = []corev1.ContainerStatus{{Name: "agent", Image: imageV2,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull"}}}}
	})
	// A waiting reason alone wakes no reconcile (the pod watch drops what
	// the planner does not read), and on a busy machine the deadline may
	// pass before the test reports the pull error: a spec change makes the
	// replica set look again, with the reason in its cache.
	s.updateEDS(eds, func(e *v1alpha1.ExtendedDaemonSet) { e.Spec.ProgressDeadlineSeconds = ptr.To[int32](3) })
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(conditions.GetMessage(e, v1alpha1.StalledCondition)).To(gomega.ContainSubstring("pod " + next.Name + " not ready: ErrImagePull"))
	}).Should(gomega.Succeed())

	s.runPod(&next)
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		expectRolledOut(g, e)
		g.Expect(conditions.Has(e, v1alpha1.StalledCondition)).To(gomega.BeFalse())
	}).Should(gomega.Succeed())
}

// A node that has not been Ready for longer than the grace period no longer
// holds the budget: the pod stuck terminating there is ignored, the rollout
// goes on, and the status counts the node.
func TestUnresponsiveNodeDoesNotBlockTheRollout(t *testing.T) {
	s := newScenario(t)
	nodes := []*corev1.Node{s.createNode("a", nil), s.createNode("b", nil), s.createNode("c", nil)}
	eds := s.newEDS("agent", imageV1)
	first, stable := s.createRolledOut(eds, nodes...)
	s.setImage(eds, imageV2)
	second := s.activeReplicaSet(eds.Name, first)

	var stuck corev1.Pod
	s.g.Eventually(func(g gomega.Gomega) {
		for _, p := range stable {
			if s.gone(g, &p) {
				stuck = p
				return
			}
		}
		g.Expect(false).To(gomega.BeTrue(), "no pod deleted yet")
	}).Should(gomega.Succeed())
	stuckNode := placement.TargetNode(&stuck)
	s.updateNodeStatus(stuckNode, func(st *corev1.NodeStatus) {
		st.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown,
			Reason: "NodeStatusUnknown", LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour))}}
	})
	var rest []corev1.Pod
	for node, pod := range stable {
		if node != stuckNode {
			rest = append(rest, pod)
		}
	}
	s.replaceInAnyOrder(rest, second)
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.IgnoredUnresponsiveNodes).To(gomega.BeEquivalentTo(1))
		expectRolledOut(g, e)
	}).Should(gomega.Succeed())
}

// updateNodeStatus changes a node's status, as its kubelet or the node
// lifecycle controller would.
func (s *scenario) updateNodeStatus(name string, change func(*corev1.NodeStatus)) {
	s.t.Helper()
	node := &corev1.Node{}
	s.g.Expect(k8s.Get(s.ctx, client.ObjectKey{Name: name}, node)).To(gomega.Succeed())
	change(&node.Status)
	s.g.Expect(k8s.Status().Update(s.ctx, node)).To(gomega.Succeed())
}

// The analysis waits for the canary pods: no measurement, and no pause,
// until every canary pod is available.
func TestAnalysisStartsOnceTheCanaryPodsAreReady(t *testing.T) {
	s := newScenario(t)
	nodes := []*corev1.Node{s.createNode("a", nil), s.createNode("b", nil)}
	eds := s.newEDS("agent", imageV1)
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(1)),
		Analysis: &v1alpha1.CanaryAnalysis{
			// Nothing listens there: once measuring starts, it errors.
			Provider: v1alpha1.AnalysisProvider{Prometheus: &v1alpha1.PrometheusProvider{Address: "http://127.0.0.1:9"}},
			Metrics:  []v1alpha1.AnalysisMetric{{Name: "restarts", Preset: v1alpha1.MetricPresetRestarts}},
		},
	}
	_, stable := s.createRolledOut(eds, nodes...)
	s.setImage(eds, imageV2)
	second, canaryNodes := s.runningCanary(eds.Name)
	s.g.Consistently(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.Canary.ReadyAt).To(gomega.BeNil())
		g.Expect(e.Status.Canary.Analysis).To(gomega.BeNil(), "measured before any canary pod was ready")
		g.Expect(conditions.GetReason(e, v1alpha1.ReconcilingCondition)).To(gomega.Equal(v1alpha1.ReasonCanaryRunning))
	}, 2*time.Second).Should(gomega.Succeed())

	s.replaceOnNode(stable[canaryNodes[0]], second)
	s.g.Eventually(func(g gomega.Gomega) {
		c := s.getEDS(g, eds.Name).Status.Canary
		g.Expect(c.ReadyAt).NotTo(gomega.BeNil())
		g.Expect(c.Analysis).NotTo(gomega.BeNil())
		g.Expect(c.Analysis.Metrics).To(gomega.ContainElement(gomega.HaveField("Error", gomega.BeNumerically(">", 0))))
	}).Should(gomega.Succeed())
}

// A query template that could spin is refused before any query: the
// analysis is in Error and the ExtendedDaemonSet Stalled, naming the
// metric, and the canary is not promoted.
func TestQueryTemplateThatWouldSpinStallsAtOnce(t *testing.T) {
	s := newScenario(t)
	nodes := []*corev1.Node{s.createNode("a", nil), s.createNode("b", nil)}
	eds := s.newEDS("agent", imageV1)
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(1)), Duration: &metav1.Duration{Duration: time.Second},
		Analysis: &v1alpha1.CanaryAnalysis{
			Provider: v1alpha1.AnalysisProvider{Prometheus: &v1alpha1.PrometheusProvider{Address: "http://127.0.0.1:9"}},
			Metrics: []v1alpha1.AnalysisMetric{{Name: "spin", Query: "{{range 3000000000}}{{end}}vector(0)",
				ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(0.0)}}},
		},
	}
	first, _ := s.createRolledOut(eds, nodes...)
	s.setImage(eds, imageV2)
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(conditions.GetReason(e, v1alpha1.StalledCondition)).To(gomega.Equal(v1alpha1.ReasonInvalidSpec))
		g.Expect(conditions.GetMessage(e, v1alpha1.StalledCondition)).To(gomega.And(
			gomega.ContainSubstring("spin"), gomega.ContainSubstring("range")))
		g.Expect(kstatus(g, e)).To(gomega.Equal(status.FailedStatus))
	}).Should(gomega.Succeed())
	s.g.Consistently(func(g gomega.Gomega) {
		g.Expect(s.getEDS(g, eds.Name).Status.ActiveReplicaSet).To(gomega.Equal(first))
	}, 2*time.Second).Should(gomega.Succeed())
}

// A pod creation the API server refuses (here an admission policy) is told
// as a FailedCreate warning in the API server's words, once however often
// it is retried, and named by the progress deadline's Stalled message.
func TestRefusedPodCreationIsToldOnce(t *testing.T) {
	s := newScenario(t)
	const refusal = "agents may not run in this namespace"
	s.denyPodCreation(refusal)
	node := s.createNode("a", nil)
	eds := s.newEDS("agent", imageV1)
	eds.Spec.ProgressDeadlineSeconds = ptr.To[int32](2)
	s.create(eds)
	ers := s.activeReplicaSet(eds.Name)

	refused := func(g gomega.Gomega) []eventsv1.Event {
		var events eventsv1.EventList
		g.Expect(k8s.List(s.ctx, &events, client.InNamespace(s.ns))).To(gomega.Succeed())
		var out []eventsv1.Event
		for _, e := range events.Items {
			if e.Reason == "FailedCreate" && e.Type == corev1.EventTypeWarning && e.Regarding.Name == ers {
				out = append(out, e)
			}
		}
		return out
	}
	s.g.Eventually(func(g gomega.Gomega) {
		events := refused(g)
		g.Expect(events).To(gomega.HaveLen(1))
		g.Expect(events[0].Note).To(gomega.ContainSubstring(refusal))
		e := s.getEDS(g, eds.Name)
		g.Expect(conditions.GetReason(e, v1alpha1.StalledCondition)).To(gomega.Equal(v1alpha1.ReasonProgressDeadlineExceeded))
		g.Expect(conditions.GetMessage(e, v1alpha1.StalledCondition)).To(gomega.And(
			gomega.ContainSubstring(node.Name+" (no pod)"), gomega.ContainSubstring(refusal)))
	}).Should(gomega.Succeed())
	s.g.Consistently(func(g gomega.Gomega) {
		events := refused(g)
		g.Expect(events).To(gomega.HaveLen(1))
		g.Expect(events[0].Series).To(gomega.BeNil(), "the refusal was told again within a minute")
	}, 3*time.Second).Should(gomega.Succeed())
}

// denyPodCreation makes the API server refuse every pod created in the
// scenario's namespace, with message, as an admission policy does.
func (s *scenario) denyPodCreation(message string) {
	s.t.Helper()
	s.deny(admissionregistrationv1.Create, "", "v1", "pods", message)
	// The policy takes effect once the API server has loaded it.
	probe := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: s.ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: imageV1}}}}
	s.g.Eventually(func() error {
		err := k8s.Create(s.ctx, probe.DeepCopy())
		if err == nil {
			_ = k8s.Delete(s.ctx, probe, client.GracePeriodSeconds(0))
			return errors.New("pod creation still allowed")
		}
		return nil
	}).Should(gomega.Succeed())
}

// deny makes the API server refuse operation on resource in the
// scenario's namespace, with message, as an admission policy does.
func (s *scenario) deny(operation admissionregistrationv1.OperationType, group, version, resource, message string) {
	s.t.Helper()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: s.ns + "-" + strings.ToLower(string(operation)) + "-" + resource},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{operation},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{version}, Resources: []string{resource}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: message}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: s.ns},
			}},
		},
	}
	s.g.Expect(k8s.Create(s.ctx, policy)).To(gomega.Succeed())
	s.g.Expect(k8s.Create(s.ctx, binding)).To(gomega.Succeed())
	s.t.Cleanup(func() {
		_ = k8s.Delete(context.Background(), binding)
		_ = k8s.Delete(context.Background(), policy)
	})
}
