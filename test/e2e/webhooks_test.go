package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// gateInterval is the gates' interval in these tests, the least allowed.
var gateInterval = &metav1.Duration{Duration: 5 * time.Second}

// gate is a webhook of type t named name, to url, asked every gateInterval.
func gate(name string, t v1alpha1.CanaryWebhookType, url string) v1alpha1.CanaryWebhook {
	return v1alpha1.CanaryWebhook{Name: name, Type: t, WebRequest: v1alpha1.WebRequest{URL: url}, Interval: gateInterval}
}

// notification is a webhook of type t named name, to url.
func notification(name string, t v1alpha1.CanaryWebhookType, url string) v1alpha1.CanaryWebhook {
	return v1alpha1.CanaryWebhook{Name: name, Type: t, WebRequest: v1alpha1.WebRequest{URL: url}}
}

// createOnGroup rolls v1 of an agent named name out on n nodes of a group
// of its own, with canary, then changes its template to v2. It returns
// the agent and its nodes.
func (s *scenario) createOnGroup(name string, n int, canary *v1alpha1.CanaryStrategy) (*v1alpha1.ExtendedDaemonSet, []string) {
	s.t.Helper()
	nodes := groupNodeNames(name, n)
	s.addNodeGroup(name, nodes...)
	eds := agentEDS(s.ns, name, "v1")
	eds.Spec.Template.Spec.NodeSelector = onGroup(name)
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("50%"))
	eds.Spec.Strategy.Canary = canary
	s.create(eds)
	eds, _ = s.expectRolledOut(eds, "v1", nodes)
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	return eds, nodes
}

// expectAtGate waits until the canary of eds waits at gate (named, of
// type t, before step when a confirm-step) with nodes canary nodes, told
// by status.canary.gates and the Canary, Ready and Reconciling conditions,
// whose message ends with the gate's last answer when answer is set.
func (s *scenario) expectAtGate(eds *v1alpha1.ExtendedDaemonSet, name string, t v1alpha1.CanaryWebhookType, step int32, nodes int, answer string) *v1alpha1.CanaryStatus {
	s.t.Helper()
	var c *v1alpha1.CanaryStatus
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		c = latest.Status.Canary
		g.Expect(c).NotTo(gomega.BeNil(), "no canary")
		g.Expect(c.Failed || c.Paused).To(gomega.BeFalse(), "canary %s: %s", c.Reason, c.Message)
		g.Expect(c.Reason).To(gomega.Equal(v1alpha1.ReasonWaitingForGate), c.Message)
		g.Expect(c.Nodes).To(gomega.HaveLen(nodes))
		g.Expect(c.Gates).To(gomega.ContainElement(gomega.And(gomega.HaveField("Name", name), gomega.HaveField("Type", t),
			gomega.HaveField("Step", step), gomega.HaveField("PassedAt", gomega.BeNil()))))
		waiting := fmt.Sprintf("waiting for gate %s (%s)", name, t)
		for _, cond := range []string{v1alpha1.CanaryCondition, v1alpha1.ReadyCondition, v1alpha1.ReconcilingCondition} {
			got := apimeta.FindStatusCondition(latest.Status.Conditions, cond)
			g.Expect(got).NotTo(gomega.BeNil(), "no %s condition", cond)
			g.Expect(got.Reason).To(gomega.Equal(v1alpha1.ReasonWaitingForGate), "%s: %s", cond, got.Message)
			g.Expect(got.Message).To(gomega.ContainSubstring(waiting), cond)
			g.Expect(got.Message).To(gomega.HaveSuffix(answer), cond)
			g.Expect(got.Message).NotTo(gomega.ContainSubstring("secret-looking"), "an answer's body reached %s", cond)
		}
		g.Expect(latest.Status.State).To(gomega.Equal(v1alpha1.StateCanary))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	return c
}

// Each gate holds the canary where it stands, asked again and again with
// the same delivery id while its receiver answers 503, and lets it go on
// once it answers 200: confirm-start before any canary pod, confirm-step
// before step 2, confirm-promotion before promotion. The event webhook
// hears every transition, signed with the key of its Secret.
func TestGatesHoldThenPass(t *testing.T) {
	s := newScenario(t)
	key := []byte("e2e-signing-key")
	r := startReceiver(t, key)
	s.g.Expect(env.Client.Create(s.ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "hooks"}, Data: map[string][]byte{"signing-key": key},
	})).To(gomega.Succeed())
	r.openPath("chat")
	events := notification("chat", v1alpha1.WebhookEvent, r.url("chat"))
	events.SigningKeyFrom = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "hooks"}, Key: "signing-key"}
	step := func(replicas int32) v1alpha1.CanaryStep {
		return v1alpha1.CanaryStep{Replicas: intstr.FromInt32(replicas), Duration: &metav1.Duration{Duration: 3 * time.Second}}
	}
	eds, nodes := s.createOnGroup("gated", 4, &v1alpha1.CanaryStrategy{
		Steps: []v1alpha1.CanaryStep{step(1), step(2)},
		Webhooks: []v1alpha1.CanaryWebhook{
			gate("ticket", v1alpha1.WebhookConfirmStart, r.url("ticket")),
			gate("window", v1alpha1.WebhookConfirmStep, r.url("window")),
			gate("smoke", v1alpha1.WebhookConfirmPromotion, r.url("smoke")),
			events,
		},
	})

	c := s.expectAtGate(eds, "ticket", v1alpha1.WebhookConfirmStart, 0, 0, "last answer: answered 503")
	s.expectPodsKept(eds, holdWindow, func(g gomega.Gomega) {
		g.Expect(s.get(eds).Status.Canary.Nodes).To(gomega.BeEmpty(), "a canary node before confirm-start passed")
		for _, pod := range s.pods(g, eds) {
			g.Expect(pod.Spec.Containers[0].Image).To(gomega.Equal(agentImage("v1")), "a canary pod before confirm-start passed")
		}
	})
	s.g.Eventually(func() int { return len(r.got("ticket")) }, 4*gateInterval.Duration, pollInterval).Should(
		gomega.BeNumerically(">=", 2), "the gate is asked again on its interval")
	asks := r.got("ticket")
	for _, ask := range asks {
		s.g.Expect(ask.id).To(gomega.Equal(asks[0].id), "asking a gate again is the same delivery")
		s.g.Expect(ask.payload.DeliveryID).To(gomega.Equal(ask.id))
		s.g.Expect(ask.payload.Transition.Gate).NotTo(gomega.BeNil())
		s.g.Expect(ask.payload.Transition.Gate.Type).To(gomega.Equal("confirm-start"))
		s.g.Expect(ask.payload.ReplicaSet).To(gomega.Equal(c.ReplicaSet))
	}

	r.openPath("ticket")
	s.expectAtGate(eds, "window", v1alpha1.WebhookConfirmStep, 2, 1, "last answer: answered 503")
	r.openPath("window")
	s.expectAtGate(eds, "smoke", v1alpha1.WebhookConfirmPromotion, 0, 2, "last answer: answered 503")
	r.openPath("smoke")
	s.expectPromoted(eds, "v2", nodes, c.ReplicaSet)

	var told []string
	s.g.Eventually(func() []string {
		told = nil
		for _, d := range r.got("chat") {
			s.g.Expect(d.signed).To(gomega.BeTrue(), "the signature of %s does not verify", d.payload.Transition.Reason)
			s.g.Expect(d.id).To(gomega.Equal(d.payload.DeliveryID))
			s.g.Expect(d.payload.Object.Name).To(gomega.Equal(eds.Name))
			s.g.Expect(d.payload.Object.UID).To(gomega.Equal(string(eds.UID)))
			told = append(told, d.payload.Transition.Reason)
		}
		return told
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.ContainElements(
		"CanaryStarted", "CanaryStepStarted", "CanaryPromoted", "RollingUpdateStarted", "RolledOut"))
	for _, reason := range []string{"CanaryStarted", "CanaryStepStarted", "CanaryPromoted"} {
		n := len(slices.DeleteFunc(slices.Clone(told), func(r string) bool { return r != reason }))
		s.g.Expect(n).To(gomega.Equal(1), "%s told %d times: %v", reason, n, told)
	}
	promoted := r.got("chat")[slices.Index(told, "CanaryPromoted")].payload
	s.g.Expect(promoted.NewImages).To(gomega.ConsistOf(image{"agent", agentImage("v2")}))
	s.g.Expect(promoted.OldImages).To(gomega.ConsistOf(image{"agent", agentImage("v1")}))
	s.g.Expect(promoted.CanaryNodes).To(gomega.HaveLen(2))
}

// A gate that gets no 2xx answer within its timeout fails the canary, and
// the rollback webhook is told; or, with onTimeout Pause, pauses it. Both
// with reason GateTimedOut.
func TestGateTimeout(t *testing.T) {
	for _, tc := range []struct {
		onTimeout v1alpha1.GateTimeoutAction
		phase     canaryPhase
	}{
		{v1alpha1.GateTimeoutFail, canaryFailed},
		{v1alpha1.GateTimeoutPause, canaryPaused},
	} {
		t.Run(string(tc.onTimeout), func(t *testing.T) {
			s := newScenario(t)
			r := startReceiver(t, nil)
			smoke := gate("smoke", v1alpha1.WebhookConfirmPromotion, r.url("smoke"))
			smoke.Timeout, smoke.OnTimeout = &metav1.Duration{Duration: 8 * time.Second}, tc.onTimeout
			eds, _ := s.createOnGroup("timeout", 2, &v1alpha1.CanaryStrategy{
				Replicas: ptr.To(intstr.FromInt32(1)), Duration: &metav1.Duration{Duration: 2 * time.Second},
				Webhooks: []v1alpha1.CanaryWebhook{smoke, notification("pager", v1alpha1.WebhookRollback, r.url("pager"))},
			})
			s.expectAtGate(eds, "smoke", v1alpha1.WebhookConfirmPromotion, 0, 1, "")
			latest := s.expectCanary(eds, tc.phase, v1alpha1.ReasonGateTimedOut)
			s.g.Expect(latest.Status.Canary.Message).To(gomega.ContainSubstring("gate smoke (confirm-promotion) got no 2xx answer within its timeout of 8s"))
			if tc.phase != canaryFailed {
				s.g.Consistently(func() []delivery { return r.got("pager") }, holdWindow, pollInterval).Should(gomega.BeEmpty())
				return
			}
			// A receiver answering 503 is sent the notification again (its
			// retries), always as the same delivery.
			var pager []delivery
			s.g.Eventually(func() []delivery { pager = r.got("pager"); return pager }, rolloutTimeout, pollInterval).ShouldNot(gomega.BeEmpty())
			for _, d := range pager {
				s.g.Expect(d.payload.Transition.Reason).To(gomega.Equal("CanaryFailed"))
				s.g.Expect(d.id).To(gomega.Equal(pager[0].id))
			}
		})
	}
}

// A gate whose receiver hangs, and a notification receiver that is down,
// delay no other rollout: while one ExtendedDaemonSet waits at its hanging
// gate, another, whose gate answers and whose event receiver is down, goes
// through its canary and rolls out.
func TestHangingReceiverDelaysNoOtherRollout(t *testing.T) {
	s := newScenario(t)
	r := startReceiver(t, nil)
	r.hang("hang")
	r.openPath("free")
	down := startReceiver(t, nil)
	downURL := down.url("events")
	down.srv.Close()

	canary := func(hooks ...v1alpha1.CanaryWebhook) *v1alpha1.CanaryStrategy {
		return &v1alpha1.CanaryStrategy{Replicas: ptr.To(intstr.FromInt32(1)), Duration: &metav1.Duration{Duration: 2 * time.Second}, Webhooks: hooks}
	}
	// Each ask of the hanging gate lasts 30s, during which a sender shared
	// with the other gate would not ask it.
	hanging := gate("hang", v1alpha1.WebhookConfirmStart, r.url("hang"))
	hanging.RequestTimeout = &metav1.Duration{Duration: 30 * time.Second}
	stuck, _ := s.createOnGroup("stuck", 2, canary(hanging))
	free, nodes := s.createOnGroup("free", 2, canary(gate("free", v1alpha1.WebhookConfirmStart, r.url("free")),
		notification("down", v1alpha1.WebhookEvent, downURL)))

	s.g.Eventually(func() []delivery { return r.got("free") }, 10*time.Second, pollInterval).ShouldNot(gomega.BeEmpty(),
		"the other gate was not asked while a receiver hangs")
	s.expectRolledOut(free, "v2", nodes)
	s.expectAtGate(stuck, "hang", v1alpha1.WebhookConfirmStart, 0, 0, "")
}

// A webhook to a host the controller may not reach (here the link-local
// address of cloud metadata, refused unless --allowed-webhook-hosts lists
// it) is refused without being sent, and the condition says how to allow
// it.
func TestDisallowedWebhookHostIsRefused(t *testing.T) {
	s := newScenario(t)
	eds, _ := s.createOnGroup("refused", 1, &v1alpha1.CanaryStrategy{
		Webhooks: []v1alpha1.CanaryWebhook{gate("metadata", v1alpha1.WebhookConfirmStart, "http://169.254.169.254/latest/meta-data")},
	})
	s.expectAtGate(eds, "metadata", v1alpha1.WebhookConfirmStart, 0, 0,
		"last answer: host 169.254.169.254 is not allowed for webhooks and web metrics: add it to --allowed-webhook-hosts")
}
