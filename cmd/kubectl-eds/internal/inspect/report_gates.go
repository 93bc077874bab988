package inspect

import (
	"strconv"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// gates lists the gates of the point the canary stands at (and the
// confirm-start ones it passed), or, without a canary, the gates before
// the domain the rolling update stands at: each one passed, or waiting
// since when, with the last answer's status code or reason.
func (r *report) gates() {
	st := &r.s.eds.Status
	if c := st.Canary; c != nil {
		if len(c.Gates) == 0 {
			return
		}
		r.line("Gates:")
		r.line("  NAME\tTYPE\tBEFORE STEP\tSTATE\tLAST ANSWER")
		for _, g := range c.Gates {
			step := "-"
			if g.Step > 0 {
				step = strconv.Itoa(int(g.Step))
			}
			r.line("  %s\t%s\t%s\t%s\t%s", g.Name, g.Type, step, r.gateState(g), orNone(g.LastAnswer))
		}
		return
	}
	d := st.DomainGate
	if d == nil || d.ReplicaSet != st.ActiveReplicaSet || len(d.Gates) == 0 {
		return
	}
	r.line("Gates before domain %s:", d.Domain)
	r.line("  NAME\tTYPE\tSTATE\tLAST ANSWER")
	for _, g := range d.Gates {
		r.line("  %s\t%s\t%s\t%s", g.Name, g.Type, r.gateState(g), orNone(g.LastAnswer))
	}
}

// gateState says how long the gate g waited to pass, or waits.
func (r *report) gateState(g v1alpha1.CanaryGateStatus) string {
	if g.PassedAt != nil {
		return "passed after " + duration.HumanDuration(g.PassedAt.Sub(g.Since.Time))
	}
	return "waiting for " + age(g.Since, r.s.now)
}
