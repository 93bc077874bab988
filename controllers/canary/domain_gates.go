package canary

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// DomainGateInput is what the gates before the domains of a Sequential
// topology rollout are decided from: after promotion, the canary's
// confirm-step webhooks stand before each domain after the first, a
// domain's bake counting as a step.
type DomainGateInput struct {
	// Strategy is the canary strategy, nil without one; Sequential says
	// the rollout has a Sequential topology.
	Strategy    *v1alpha1.CanaryStrategy
	Annotations map[string]string
	Sequential  bool
	// ReplicaSet is the active replica set and Domains its status.domains,
	// nil until its status describes it as the active one.
	ReplicaSet string
	Domains    []v1alpha1.DomainStatus
	// Status is the record so far, nil when none.
	Status *v1alpha1.DomainGateStatus
	// Answers are the latest answers of the gates before Status.Domain.
	Answers map[GatePoint]GateAnswer
	Now     time.Time
}

// DomainGateDecision is what to record, ask and say.
type DomainGateDecision struct {
	// Status is the record to keep; nil without gates before domains.
	Status *v1alpha1.DomainGateStatus
	// Asks are the gates to ask now, with the domain they stand before.
	Asks   []GateAsk
	Domain string
	// Message says which gate holds which domain back and since when,
	// empty when none does.
	Message string
	// Verdict is Fail or Pause, reason GateTimedOut, once a gate waited
	// its timeout; Continue otherwise.
	Verdict Verdict
	// RequeueAfter is when time alone changes the decision, 0 for never.
	RequeueAfter time.Duration
}

// DomainGates decides the gates before the domain of the active replica
// set's rollout that waits for them: the first domain not done, Pending
// while every domain before it is done (the planner holds it so until its
// gates passed, through DomainGatePassedThrough). A record of another
// replica set is forgotten, so a new rollout asks again; the gates of a
// domain are asked until every one answered 2xx, and then never again for
// that domain. A gate past its timeout fails the rollout, or pauses it
// with onTimeout Pause until an unpause names "<replicaSet>@<domain>".
func DomainGates(in DomainGateInput) DomainGateDecision {
	var webhooks []*v1alpha1.CanaryWebhook
	if in.Strategy != nil && in.Sequential {
		webhooks = webhooksOf(in.Strategy, v1alpha1.WebhookConfirmStep)
	}
	if len(webhooks) == 0 {
		return DomainGateDecision{}
	}
	st := in.Status.DeepCopy()
	if st != nil && st.ReplicaSet != in.ReplicaSet {
		st = nil
	}
	d := DomainGateDecision{Status: st}
	next := gatedDomain(in.Domains)
	if next == "" || domainGatePassed(st, next) {
		return d
	}
	answers := in.Answers
	if st == nil {
		st = &v1alpha1.DomainGateStatus{ReplicaSet: in.ReplicaSet}
	}
	if st.Domain != next {
		// The answers read are the gates' before the domain recorded.
		st.Domain, st.Gates, answers = next, nil, nil
	}
	d.Status, d.Domain = st, next
	at := " before domain " + next
	d.Verdict = domainGateVerdict(in, st, webhooks, at)
	if d.Verdict.Action != Continue {
		// A gate that timed out is asked no more.
		d.Message = d.Verdict.Message
		return d
	}
	var hold gateHold
	st.Gates, hold = holdGates(st.Gates, webhooks, 0, at, answers, in.Now)
	if hold.open {
		st.PassedThrough = next
		return d
	}
	d.Asks, d.Message, d.RequeueAfter = hold.asks, hold.message, hold.wait
	return d
}

// domainGateVerdict judges the gates recorded in st against their
// timeouts: Fail if one that fails timed out, else Pause if one that
// pauses did and no unpause names the domain. An unpause passes the gates
// that paused.
func domainGateVerdict(in DomainGateInput, st *v1alpha1.DomainGateStatus, webhooks []*v1alpha1.CanaryWebhook, at string) Verdict {
	unpaused := DomainUnpaused(in.Strategy, in.Annotations, st.ReplicaSet, st.Domain)
	var verdict Verdict
	for i := range st.Gates {
		g := &st.Gates[i]
		w := webhookOf(webhooks, g.Name)
		if w == nil || !timedOut(g, w, in.Now) {
			continue
		}
		v := Verdict{Action: Fail, Reason: v1alpha1.ReasonGateTimedOut, Message: timedOutMessage(g, w, at)}
		if w.OnTimeout == v1alpha1.GateTimeoutPause {
			if unpaused {
				g.PassedAt = &metav1.Time{Time: in.Now}
				continue
			}
			v.Action = Pause
			v.Message += fmt.Sprintf("; unpausing %s passes it", DomainSteering(st.ReplicaSet, st.Domain))
		}
		if v.Action > verdict.Action {
			verdict = v
		}
	}
	return verdict
}

// DomainSteering is the unpause value that passes the paused gates
// before domain of replicaSet's rollout.
func DomainSteering(replicaSet, domain string) string {
	return replicaSet + "@" + domain
}

// DomainUnpaused says whether the unpause annotation or its spec twin
// names the gates before domain of replicaSet's rollout. Only the
// "<replicaSet>@<domain>" form does: a bare replica set left from its
// canary must not pass a gate it was never meant for.
func DomainUnpaused(strategy *v1alpha1.CanaryStrategy, annotations map[string]string, replicaSet, domain string) bool {
	want := DomainSteering(replicaSet, domain)
	return annotations[SteerUnpause.Annotation()] == want || SteerUnpause.specValue(strategy) == want
}

func webhookOf(webhooks []*v1alpha1.CanaryWebhook, name string) *v1alpha1.CanaryWebhook {
	for _, w := range webhooks {
		if w.Name == name {
			return w
		}
	}
	return nil
}

// gatedDomain is the domain that waits for its gates: the first domain not
// done, if it is Pending and not the first, every domain before it done;
// empty when none waits.
func gatedDomain(domains []v1alpha1.DomainStatus) string {
	for i, d := range domains {
		switch d.State {
		case v1alpha1.DomainDone:
			continue
		case v1alpha1.DomainPending:
			if i > 0 {
				return d.Name
			}
		}
		return ""
	}
	return ""
}

// domainGatePassed reports whether the gates before domain passed: it is
// no later than the last domain whose gates passed.
func domainGatePassed(st *v1alpha1.DomainGateStatus, domain string) bool {
	return st != nil && st.PassedThrough != "" && rollout.CompareDomains(domain, st.PassedThrough) <= 0
}

// DomainGatePassedThrough is the planner's input for replicaSet: the last
// domain whose gates passed, empty when none did or st is another replica
// set's.
func DomainGatePassedThrough(st *v1alpha1.DomainGateStatus, replicaSet string) string {
	if st == nil || st.ReplicaSet != replicaSet {
		return ""
	}
	return st.PassedThrough
}

// DomainGated says whether the planner of eds's active replica set holds
// each domain after the first until its gates passed: a Sequential
// topology and a confirm-step webhook.
func DomainGated(eds *v1alpha1.ExtendedDaemonSet) bool {
	t, c := eds.Spec.Strategy.RollingUpdate.Topology, eds.Spec.Strategy.Canary
	return t != nil && t.Order != v1alpha1.TopologyParallel && c != nil && len(webhooksOf(c, v1alpha1.WebhookConfirmStep)) > 0
}
