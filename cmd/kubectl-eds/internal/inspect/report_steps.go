package inspect

import (
	"strconv"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// canarySteps lists the steps of a canary that has them: the ones reached,
// with how they ended, then the ones to come.
func (r *report) canarySteps() {
	c, spec := r.s.eds.Status.Canary, r.s.eds.Spec.Strategy.Canary
	if c == nil || c.Step == 0 || spec == nil || len(spec.Steps) == 0 {
		return
	}
	r.line("Canary steps: step %d of %d", c.Step, len(spec.Steps))
	r.line("  STEP\tREPLICAS\tNODES\tSTARTED\tFINISHED\tRESULT\tANALYSIS")
	reached := map[int32]bool{}
	for _, rec := range c.Steps {
		reached[rec.Step] = true
		finished := "-"
		if rec.FinishedAt != nil {
			finished = age(*rec.FinishedAt, r.s.now) + " ago"
		}
		r.line("  %d\t%s\t%d\t%s ago\t%s\t%s\t%s", rec.Step, rec.Replicas, rec.Nodes, age(rec.StartedAt, r.s.now), finished, rec.Result,
			orNone(string(stepAnalysis(c, rec))))
	}
	for i, step := range spec.Steps {
		if n := int32(i + 1); n > c.Step && !reached[n] { //nolint:gosec // steps are at most MaxCanarySteps
			what := "Pending"
			if step.Pause {
				what = "Pending (pause)"
			}
			r.line("  %s\t%s\t-\t-\t-\t%s\t-", strconv.Itoa(i+1), step.Replicas.String(), what)
		}
	}
}

// stepAnalysis is the analysis phase of a step: the live one for the
// running step, the one it ended with otherwise.
func stepAnalysis(c *v1alpha1.CanaryStatus, rec v1alpha1.CanaryStepStatus) v1alpha1.AnalysisPhase {
	if rec.Result == v1alpha1.CanaryStepRunning && c.Analysis != nil {
		return c.Analysis.Phase
	}
	return rec.Analysis
}
