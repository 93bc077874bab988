package canary

import (
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// GatePoint names one gate of a canary instance: a webhook, its type, and
// for confirm-step the step it stands before (0 otherwise).
type GatePoint struct {
	Name string
	Type v1alpha1.CanaryWebhookType
	Step int32
}

// GateAnswer is the latest answer of a gate's receiver: passed on a 2xx,
// else Answer says what came back (a status code and a short reason).
type GateAnswer struct {
	Passed bool
	Answer string
}

// GateAsk is a gate to ask now: its receiver is asked again every
// Interval until it answers 2xx.
type GateAsk struct {
	Point    GatePoint
	Webhook  *v1alpha1.CanaryWebhook
	Interval time.Duration
}

var (
	defaultGateInterval = mustParse(v1alpha1.DefaultGateInterval)
	defaultGateTimeout  = mustParse(v1alpha1.DefaultGateTimeout)
)

// GateInterval is how often the gate w asks again.
func GateInterval(w *v1alpha1.CanaryWebhook) time.Duration {
	if w.Interval != nil {
		return w.Interval.Duration
	}
	return defaultGateInterval
}

// GateTimeout is how long the gate w waits at most.
func GateTimeout(w *v1alpha1.CanaryWebhook) time.Duration {
	if w.Timeout != nil {
		return w.Timeout.Duration
	}
	return defaultGateTimeout
}

// gateHold is the outcome of the gates at one point of a canary: open
// when every gate of the point passed (or there is none); otherwise the
// canary holds, the gates in asks are asked, and wait is when time alone
// changes the decision (the next ask or the soonest timeout).
type gateHold struct {
	open    bool
	asks    []GateAsk
	message string
	wait    time.Duration
}

// webhooksOf are the webhooks of type t in the strategy.
func webhooksOf(strategy *v1alpha1.CanaryStrategy, t v1alpha1.CanaryWebhookType) []*v1alpha1.CanaryWebhook {
	var out []*v1alpha1.CanaryWebhook
	for i := range strategy.Webhooks {
		if strategy.Webhooks[i].Type == t {
			out = append(out, &strategy.Webhooks[i])
		}
	}
	return out
}

// gateRecord is st's record of the gate at p, nil when none.
func gateRecord(st *v1alpha1.CanaryStatus, p GatePoint) *v1alpha1.CanaryGateStatus {
	for i := range st.Gates {
		if g := &st.Gates[i]; g.Name == p.Name && g.Type == p.Type && g.Step == p.Step {
			return g
		}
	}
	return nil
}

// startGatesPending says whether the canary instance st, without a node
// yet, still has to pass a confirm-start gate: some confirm-start webhook
// has no passed record. Records of confirm-start gates are kept for the
// instance's life, so a canary that loses every node is not asked again.
func startGatesPending(strategy *v1alpha1.CanaryStrategy, st *v1alpha1.CanaryStatus) bool {
	if len(st.Nodes) > 0 {
		return false
	}
	for _, w := range webhooksOf(strategy, v1alpha1.WebhookConfirmStart) {
		if g := gateRecord(st, GatePoint{w.Name, w.Type, 0}); g == nil || g.PassedAt == nil {
			return true
		}
	}
	return false
}

// gatesAt holds the canary st at the gates of type t before step (0 unless
// confirm-step) until each has answered 2xx. Records of the gates of
// another point are dropped, except confirm-start ones, which say the
// canary has started; a gate passed is never asked again for this
// instance. A gate's wait starts the first time the canary stands at it.
func gatesAt(in Input, st *v1alpha1.CanaryStatus, t v1alpha1.CanaryWebhookType, step int32) gateHold {
	kept := st.Gates[:0:0]
	for _, g := range st.Gates {
		if g.Type == v1alpha1.WebhookConfirmStart || (g.Type == t && g.Step == step) {
			kept = append(kept, g)
		}
	}
	at := ""
	if step > 0 {
		at = fmt.Sprintf(" before step %d", step)
	}
	var hold gateHold
	st.Gates, hold = holdGates(kept, webhooksOf(in.Strategy, t), step, at, in.Answers, in.Now)
	return hold
}

// holdGates holds at the gates webhooks (of one type) before step, their
// records in gates, until each has answered 2xx: it records the answers,
// starts the wait of a gate met for the first time, and returns the
// records with the hold; at says where the gates stand, for the message.
func holdGates(gates []v1alpha1.CanaryGateStatus, webhooks []*v1alpha1.CanaryWebhook, step int32, at string,
	answers map[GatePoint]GateAnswer, now time.Time,
) ([]v1alpha1.CanaryGateStatus, gateHold) {
	hold := gateHold{open: true}
	for _, w := range webhooks {
		p := GatePoint{w.Name, w.Type, step}
		i := slices.IndexFunc(gates, func(g v1alpha1.CanaryGateStatus) bool {
			return g.Name == p.Name && g.Type == p.Type && g.Step == p.Step
		})
		if i < 0 {
			gates = append(gates, v1alpha1.CanaryGateStatus{Name: p.Name, Type: p.Type, Step: p.Step, Since: metav1.Time{Time: now}})
			i = len(gates) - 1
		}
		g := &gates[i]
		if g.PassedAt != nil {
			continue
		}
		switch answer, ok := answers[p]; {
		case ok && answer.Passed:
			g.PassedAt, g.LastAnswer = &metav1.Time{Time: now}, ""
			continue
		case ok:
			g.LastAnswer = truncate(answer.Answer, maxGateAnswer)
		}
		interval := GateInterval(w)
		left := g.Since.Add(GateTimeout(w)).Sub(now)
		if hold.open {
			hold.message = waitingMessage(g, at)
		}
		hold.open = false
		hold.asks = append(hold.asks, GateAsk{Point: p, Webhook: w, Interval: interval})
		hold.wait = soonest(hold.wait, min(interval, max(left, time.Second)))
	}
	return gates, hold
}

// maxGateAnswer bounds the answer a gate's record keeps.
const maxGateAnswer = 256

// waitingMessage says which gate waits, where (at), since when, and what
// its receiver answered last.
func waitingMessage(g *v1alpha1.CanaryGateStatus, at string) string {
	msg := fmt.Sprintf("waiting for gate %s (%s)%s since %s", g.Name, g.Type, at, g.Since.UTC().Format(time.RFC3339))
	if g.LastAnswer != "" {
		msg += "; last answer: " + g.LastAnswer
	}
	return msg
}

// gateVerdict judges the gates st waits at against their timeouts: a gate
// past its timeout fails the canary, or pauses it when its onTimeout says
// Pause. A person's unpause of the canary instance passes a paused gate.
// Gates no longer in the spec are forgotten.
func gateVerdict(in Input, st *v1alpha1.CanaryStatus) Verdict {
	byName := make(map[string]*v1alpha1.CanaryWebhook, len(in.Strategy.Webhooks))
	for i := range in.Strategy.Webhooks {
		byName[in.Strategy.Webhooks[i].Name] = &in.Strategy.Webhooks[i]
	}
	var verdict Verdict
	kept := st.Gates[:0:0]
	for _, g := range st.Gates {
		w := byName[g.Name]
		if w == nil || w.Type != g.Type {
			continue
		}
		kept = append(kept, g)
		g := &kept[len(kept)-1]
		if !timedOut(g, w, in.Now) {
			continue
		}
		v := Verdict{Action: Fail, Reason: v1alpha1.ReasonGateTimedOut}
		if w.OnTimeout == v1alpha1.GateTimeoutPause {
			if Steered(SteerUnpause, in.Strategy, in.Annotations, st) {
				g.PassedAt = &metav1.Time{Time: in.Now}
				continue
			}
			v.Action = Pause
		}
		v.Message = timedOutMessage(g, w, "")
		if v.Action > verdict.Action {
			verdict = v
		}
	}
	st.Gates = kept
	return verdict
}

// timedOut reports whether the gate g of webhook w waits past its timeout
// at now.
func timedOut(g *v1alpha1.CanaryGateStatus, w *v1alpha1.CanaryWebhook, now time.Time) bool {
	return g.PassedAt == nil && !now.Before(g.Since.Add(GateTimeout(w)))
}

// timedOutMessage says that the gate g of webhook w, standing at at, timed
// out, and what its receiver answered last.
func timedOutMessage(g *v1alpha1.CanaryGateStatus, w *v1alpha1.CanaryWebhook, at string) string {
	msg := fmt.Sprintf("gate %s (%s)%s got no 2xx answer within its timeout of %s", g.Name, g.Type, at, GateTimeout(w))
	if g.LastAnswer != "" {
		msg += "; last answer: " + g.LastAnswer
	}
	return msg
}

// holdAtGates records a canary held at gate hold in st and res.
func holdAtGates(st *v1alpha1.CanaryStatus, res Result, hold gateHold) Result {
	st.Paused, st.Reason, st.Message = false, v1alpha1.ReasonWaitingForGate, hold.message
	res.Asks = hold.asks
	res.RequeueAfter = soonest(res.RequeueAfter, hold.wait)
	return res
}

// soonest is the smaller of two waits, zero meaning none.
func soonest(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	}
	return min(a, b)
}

// truncate cuts s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
