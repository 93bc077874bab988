package controllers

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/notify"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/outcome"
)

// stepDomainGates decides the confirm-step gates before the domains of
// the active replica set's Sequential topology rollout (canary.DomainGates,
// a pure function) and records them in status.domainGate, which the
// active replica set's planner reads. While a canary runs, the record
// waits as it is: its gates and the domains' are never asked at once.
func (r *ExtendedDaemonSetReconciler) stepDomainGates(eds *v1alpha1.ExtendedDaemonSet, sets []*v1alpha1.ExtendedDaemonSetReplicaSet, now time.Time) canary.DomainGateDecision {
	st := &eds.Status
	if st.Canary != nil {
		return canary.DomainGateDecision{Status: st.DomainGate}
	}
	t := eds.Spec.Strategy.RollingUpdate.Topology
	in := canary.DomainGateInput{Strategy: eds.Spec.Strategy.Canary, Annotations: eds.Annotations,
		Sequential: t != nil && t.Order != v1alpha1.TopologyParallel,
		ReplicaSet: st.ActiveReplicaSet, Domains: rolloutDomains(byName(sets, st.ActiveReplicaSet)), Status: st.DomainGate, Now: now}
	in.Answers = r.domainGateAnswers(client.ObjectKeyFromObject(eds), st.DomainGate, st.ActiveReplicaSet)
	d := canary.DomainGates(in)
	st.DomainGate = d.Status
	return d
}

// rolloutDomains are the domains of active's rollout, nil until its status
// describes it as the active replica set.
func rolloutDomains(active *v1alpha1.ExtendedDaemonSetReplicaSet) []v1alpha1.DomainStatus {
	if active == nil || active.Status.Status != v1alpha1.ReplicaSetActive || active.Status.ObservedGeneration != active.Generation {
		return nil
	}
	return active.Status.Domains
}

// domainGateInstance tells the gates before one domain of one rollout from
// any other, in the notifier.
func domainGateInstance(replicaSet, domain string) string {
	return "domain:" + canary.DomainSteering(replicaSet, domain)
}

// domainGateAnswers are the answers the notifier holds for the gates
// before the domain st records for replicaSet, in the decision's terms.
func (r *ExtendedDaemonSetReconciler) domainGateAnswers(key types.NamespacedName, st *v1alpha1.DomainGateStatus, replicaSet string) map[canary.GatePoint]canary.GateAnswer {
	if r.Webhooks == nil || st == nil || st.ReplicaSet != replicaSet || st.Domain == "" {
		return nil
	}
	answers := r.Webhooks.Answers(key, domainGateInstance(st.ReplicaSet, st.Domain))
	out := make(map[canary.GatePoint]canary.GateAnswer, len(answers))
	for k, a := range answers {
		out[canary.GatePoint{Name: k.Name, Type: k.Type, Step: k.Step}] = canary.GateAnswer{Passed: a.OK, Answer: a.Reason}
	}
	return out
}

// askDomainGates asks the gates decision d waits at, with the domain
// they stand before in the payload.
func (r *ExtendedDaemonSetReconciler) askDomainGates(key types.NamespacedName, facts notify.Facts, d canary.DomainGateDecision, now time.Time) {
	facts.Domain = d.Domain
	for _, ask := range d.Asks {
		gate := notify.GateKey{Name: ask.Point.Name, Type: ask.Point.Type, Step: ask.Point.Step}
		t := notify.Transition{Reason: v1alpha1.ReasonWaitingForGate, Message: d.Message, Gate: &gate}
		r.Webhooks.Ask(key, domainGateInstance(d.Status.ReplicaSet, d.Domain), gate, ask.Interval,
			delivery(key, ask.Webhook, notify.NewPayload(facts, ask.Webhook, t)), now)
	}
}

// domainGateProgress is where a rollout held at the gates before a domain
// stands, ok when one is: stalled once a gate with onTimeout Fail timed
// out (GateTimedOut), paused by one with Pause (CanaryPaused, as a canary
// a gate paused: it waits for a person), else waiting (WaitingForGate).
func domainGateProgress(eds *v1alpha1.ExtendedDaemonSet, d canary.DomainGateDecision) (outcome.Progress, bool) {
	rs := "rolling update of " + eds.Status.ActiveReplicaSet + " "
	switch {
	case d.Verdict.Action == canary.Fail:
		return outcome.Progress{Phase: outcome.Stalled, Reason: v1alpha1.ReasonGateTimedOut, Message: rs + "stopped: " + d.Verdict.Message +
			"; no further domain starts and nothing is rolled back until the template changes"}, true
	case d.Verdict.Action == canary.Pause:
		return outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonCanaryPaused,
			Message: rs + "paused: " + d.Verdict.Reason + ": " + d.Verdict.Message}, true
	case d.Message != "":
		return outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonWaitingForGate, Message: rs + d.Message}, true
	}
	return outcome.Progress{}, false
}

// observeDomainGateWaits observes how long each gate before a domain
// waited, in the pass it passed or timed out.
func observeDomainGateWaits(eds types.NamespacedName, before, after *v1alpha1.ExtendedDaemonSet, strategy *v1alpha1.CanaryStrategy, now time.Time) {
	read, decided := before.Status.DomainGate, after.Status.DomainGate
	if read == nil || decided == nil || read.ReplicaSet != decided.ReplicaSet || read.Domain != decided.Domain {
		return
	}
	timedOut := after.Status.Canary == nil && after.Status.Reason == v1alpha1.ReasonGateTimedOut && before.Status.Reason != v1alpha1.ReasonGateTimedOut
	for _, g := range decided.Gates {
		was := gateOf(read.Gates, g)
		switch {
		case was == nil:
		case g.PassedAt != nil && was.PassedAt == nil:
			notify.ObserveGateWait(eds, g.Type, g.PassedAt.Sub(g.Since.Time))
		case g.PassedAt == nil && timedOut:
			if w := webhookNamed(strategy, g.Name); w != nil && !now.Before(g.Since.Add(canary.GateTimeout(w))) {
				notify.ObserveGateWait(eds, g.Type, now.Sub(g.Since.Time))
			}
		}
	}
}
