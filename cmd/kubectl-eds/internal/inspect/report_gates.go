package inspect

import (
	"strconv"

	"k8s.io/apimachinery/pkg/util/duration"
)

// gates lists the gates of the point the canary stands at (and the
// confirm-start ones it passed): each one passed, or waiting since when,
// with the last answer's status code or reason.
func (r *report) gates() {
	c := r.s.eds.Status.Canary
	if c == nil || len(c.Gates) == 0 {
		return
	}
	r.line("Gates:")
	r.line("  NAME\tTYPE\tBEFORE STEP\tSTATE\tLAST ANSWER")
	for _, g := range c.Gates {
		step := "-"
		if g.Step > 0 {
			step = strconv.Itoa(int(g.Step))
		}
		state := "waiting for " + age(g.Since, r.s.now)
		if g.PassedAt != nil {
			state = "passed after " + duration.HumanDuration(g.PassedAt.Sub(g.Since.Time))
		}
		r.line("  %s\t%s\t%s\t%s\t%s", g.Name, g.Type, step, state, orNone(g.LastAnswer))
	}
}
