package controllers

import (
	"encoding/json"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/notify"
)

// gateAnswers are the answers the notifier holds for the gates of the
// canary recorded for current, in the decision's terms; nil without a
// notifier or a recorded canary.
func (r *ExtendedDaemonSetReconciler) gateAnswers(eds *v1alpha1.ExtendedDaemonSet, current string) map[canary.GatePoint]canary.GateAnswer {
	c := eds.Status.Canary
	if r.Webhooks == nil || c == nil || c.ReplicaSet != current || len(eds.Spec.Strategy.Canary.Webhooks) == 0 {
		return nil
	}
	answers := r.Webhooks.Answers(client.ObjectKeyFromObject(eds), c.Instance)
	out := make(map[canary.GatePoint]canary.GateAnswer, len(answers))
	for k, a := range answers {
		out[canary.GatePoint{Name: k.Name, Type: k.Type, Step: k.Step}] = canary.GateAnswer{Passed: a.OK, Answer: a.Reason}
	}
	return out
}

// sendWebhooks asks the gates the canary waits at, and tells the event and
// rollback webhooks the transitions told as events, once the status that
// records them is written: what a receiver reads is never older than what
// decided the call. It observes the gates that ended their wait.
func (r *ExtendedDaemonSetReconciler) sendWebhooks(before, after *v1alpha1.ExtendedDaemonSet, obs edsObservation) {
	strategy := after.Spec.Strategy.Canary
	if strategy == nil || len(strategy.Webhooks) == 0 {
		return
	}
	note := obs.canaryNote
	if note != nil && note.canary != nil {
		observeGateWaits(client.ObjectKeyFromObject(after), before.Status.Canary, note.canary, strategy, obs.now)
	}
	observeDomainGateWaits(client.ObjectKeyFromObject(after), before, after, strategy, obs.now)
	if r.Webhooks == nil {
		return
	}
	facts := notify.Facts{EDS: after, New: templateOf(obs.current), ReplicaSet: after.Status.ActiveReplicaSet}
	if obs.current != nil {
		facts.ReplicaSet, facts.TemplateRevision = obs.current.Name, obs.current.Spec.TemplateGeneration
	}
	if active := byName(obs.sets, before.Status.ActiveReplicaSet); active != nil && (obs.current == nil || active.Name != obs.current.Name) {
		facts.Old = templateOf(active)
	}
	key := client.ObjectKeyFromObject(after)
	if note != nil && note.canary != nil {
		facts.Canary = note.canary
		r.askGates(key, facts, note, obs.now)
	}
	if len(obs.domainGate.Asks) > 0 {
		r.askDomainGates(key, facts, obs.domainGate, obs.now)
	}
	for _, t := range toldTransitions(before, after, note) {
		for i := range strategy.Webhooks {
			w := &strategy.Webhooks[i]
			if w.Type == v1alpha1.WebhookEvent || (w.Type == v1alpha1.WebhookRollback && t.Reason == canary.Failed) {
				r.Webhooks.Tell(key, delivery(key, w, notify.NewPayload(facts, w, t)))
			}
		}
	}
}

// askGates asks the gates the canary of note waits at.
func (r *ExtendedDaemonSetReconciler) askGates(key types.NamespacedName, facts notify.Facts, note *canaryNote, now time.Time) {
	for _, ask := range note.asks {
		gate := notify.GateKey{Name: ask.Point.Name, Type: ask.Point.Type, Step: ask.Point.Step}
		t := notify.Transition{Reason: v1alpha1.ReasonWaitingForGate, Message: note.canary.Message, Gate: &gate}
		r.Webhooks.Ask(key, note.canary.Instance, gate, ask.Interval, delivery(key, ask.Webhook, notify.NewPayload(facts, ask.Webhook, t)), now)
	}
}

// delivery is payload p for webhook w of the ExtendedDaemonSet eds.
func delivery(eds types.NamespacedName, w *v1alpha1.CanaryWebhook, p notify.Payload) notify.Delivery {
	body, err := json.Marshal(p)
	if err != nil {
		// A Payload holds strings, numbers and slices of them alone.
		panic("marshaling a webhook payload: " + err.Error())
	}
	return notify.Delivery{EDS: eds, Webhook: w, Body: body, ID: p.DeliveryID}
}

// toldTransitions are the transitions between the status read and the
// status written that are told as events and to event webhooks: the
// canary's (started, step started, paused, resumed, promoted, failed,
// retried), a rolling update started, and rolled out.
func toldTransitions(before, after *v1alpha1.ExtendedDaemonSet, note *canaryNote) []notify.Transition {
	var out []notify.Transition
	if note != nil && note.transition != "" {
		t := notify.Transition{Reason: note.transition}
		if c := note.canary; c != nil && (c.Failed || c.Paused) {
			t.Message = c.Reason + ": " + c.Message
		}
		out = append(out, t)
	}
	if prev, next := before.Status.ActiveReplicaSet, after.Status.ActiveReplicaSet; prev != "" && prev != next {
		out = append(out, notify.Transition{Reason: "RollingUpdateStarted"})
	}
	if !conditions.IsReady(before) && conditions.IsReady(after) {
		out = append(out, notify.Transition{Reason: v1alpha1.ReasonRolledOut})
	}
	return out
}

// observeGateWaits observes how long the canary decided waited at each
// gate that passed or timed out in this pass.
func observeGateWaits(eds types.NamespacedName, read, decided *v1alpha1.CanaryStatus, strategy *v1alpha1.CanaryStrategy, now time.Time) {
	if read == nil || read.Instance != decided.Instance {
		return
	}
	for _, g := range decided.Gates {
		was := gateOf(read.Gates, g)
		switch {
		case was == nil:
		case g.PassedAt != nil && was.PassedAt == nil:
			notify.ObserveGateWait(eds, g.Type, g.PassedAt.Sub(g.Since.Time))
		case g.PassedAt == nil && decided.Reason == v1alpha1.ReasonGateTimedOut && read.Reason != v1alpha1.ReasonGateTimedOut:
			if w := webhookNamed(strategy, g.Name); w != nil && !now.Before(g.Since.Add(canary.GateTimeout(w))) {
				notify.ObserveGateWait(eds, g.Type, now.Sub(g.Since.Time))
			}
		}
	}
}

func webhookNamed(strategy *v1alpha1.CanaryStrategy, name string) *v1alpha1.CanaryWebhook {
	for i := range strategy.Webhooks {
		if strategy.Webhooks[i].Name == name {
			return &strategy.Webhooks[i]
		}
	}
	return nil
}

// gateOf is the record among gates of the gate g records, nil when none.
func gateOf(gates []v1alpha1.CanaryGateStatus, g v1alpha1.CanaryGateStatus) *v1alpha1.CanaryGateStatus {
	for i := range gates {
		if o := &gates[i]; o.Name == g.Name && o.Type == g.Type && o.Step == g.Step {
			return o
		}
	}
	return nil
}

func templateOf(rs *v1alpha1.ExtendedDaemonSetReplicaSet) *corev1.PodSpec {
	if rs == nil {
		return nil
	}
	return &rs.Spec.Template.Spec
}
