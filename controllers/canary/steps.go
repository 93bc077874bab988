package canary

import (
	"fmt"
	"math"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// Reasons of a canary's state set by its steps.
const (
	// ReasonWaitingForStep: a pause step waits for a person to skip it.
	ReasonWaitingForStep = "WaitingForStep"
)

// StepStarted is the transition of a canary that went on to its next step.
const StepStarted = "CanaryStepStarted"

// StepCounts resolves the replicas of each step against the number of
// desired nodes. The schema keeps counts, and percentages, from shrinking
// among themselves; a count followed by a percentage can only be compared
// once the nodes are known, and a canary whose set would shrink is an
// invalid spec: earlier steps' nodes stay canary nodes.
func StepCounts(steps []v1alpha1.CanaryStep, desired int) ([]int, error) {
	counts := make([]int, len(steps))
	for i := range steps {
		n, err := Count(&steps[i].Replicas, desired)
		if err != nil {
			return nil, fmt.Errorf("spec.strategy.canary.steps[%d]: %w", i, err)
		}
		if i > 0 && n < counts[i-1] {
			return nil, fmt.Errorf("spec.strategy.canary.steps[%d].replicas %s is %d of the %d nodes, fewer than the %d of the step before: steps must not shrink",
				i, steps[i].Replicas.String(), n, desired, counts[i-1])
		}
		counts[i] = n
	}
	return counts, nil
}

// currentStep is the index of st's current step among steps: a canary
// recorded before its spec lost steps is at the last one.
func currentStep(st *v1alpha1.CanaryStatus, steps []v1alpha1.CanaryStep) int {
	return min(max(int(st.Step), 1), len(steps)) - 1
}

// enterStep makes step i (an index) st's current step from now on and
// records it. The analysis and readiness start over: a step is judged on
// measurements taken while its own nodes run, once they all are available.
func enterStep(st *v1alpha1.CanaryStatus, steps []v1alpha1.CanaryStep, i int, now time.Time) {
	st.Step = int32(i + 1) //nolint:gosec // steps are at most MaxCanarySteps
	st.StepStartedAt = &metav1.Time{Time: now}
	st.ReadyAt, st.Analysis = nil, nil
	st.Steps = append(st.Steps, v1alpha1.CanaryStepStatus{
		Step: st.Step, Replicas: steps[i].Replicas.String(), StartedAt: metav1.Time{Time: now}, Result: v1alpha1.CanaryStepRunning,
	})
	if extra := len(st.Steps) - v1alpha1.MaxCanarySteps; extra > 0 {
		st.Steps = st.Steps[extra:]
	}
}

// restartStep runs st's current step (without steps, the canary's
// duration) again from now, its analysis and readiness anew: its nodes
// changed, and the new ones are judged for the whole of it.
func restartStep(st *v1alpha1.CanaryStatus, now time.Time) {
	st.StepStartedAt = &metav1.Time{Time: now}
	st.ReadyAt, st.Analysis = nil, nil
	if rec := runningStep(st); rec != nil {
		rec.StartedAt = metav1.Time{Time: now}
	}
}

// finishStep records how st's current step ended.
func finishStep(st *v1alpha1.CanaryStatus, result v1alpha1.CanaryStepResult, now time.Time) {
	rec := runningStep(st)
	if rec == nil {
		return
	}
	rec.Result, rec.FinishedAt = result, &metav1.Time{Time: now}
	if st.Analysis != nil {
		rec.Analysis = st.Analysis.Phase
	}
}

// runningStep is the record of st's current step, nil when it has none.
func runningStep(st *v1alpha1.CanaryStatus) *v1alpha1.CanaryStepStatus {
	if n := len(st.Steps); n > 0 && st.Steps[n-1].Step == st.Step && st.Steps[n-1].Result == v1alpha1.CanaryStepRunning {
		return &st.Steps[n-1]
	}
	return nil
}

// stepDuration is how long step runs before it can end on its own; zero
// for a pause step.
func stepDuration(step v1alpha1.CanaryStep) time.Duration {
	if step.Duration == nil {
		return 0
	}
	return step.Duration.Duration
}

// StepMessage tells where a canary with steps stands, for example
// "step 2 of 4: 10% (23 nodes), 6m left"; empty without steps.
func StepMessage(st *v1alpha1.CanaryStatus, strategy *v1alpha1.CanaryStrategy, now time.Time) string {
	if strategy == nil || len(strategy.Steps) == 0 || st.Step == 0 {
		return ""
	}
	steps := strategy.Steps
	i := currentStep(st, steps)
	msg := fmt.Sprintf("step %d of %d: %s (%d nodes)", i+1, len(steps), steps[i].Replicas.String(), len(st.Nodes))
	switch {
	case steps[i].Pause:
		return msg + ", waits for a person to skip it"
	case st.StepStartedAt == nil:
		return msg
	}
	left := st.StepStartedAt.Add(stepDuration(steps[i])).Sub(now)
	if left <= 0 {
		return msg + ", duration passed"
	}
	return msg + ", " + roundUp(left) + " left"
}

// roundUp says d in whole minutes, or seconds under a minute, rounded up,
// so a status written now and then reads the same between two of them.
func roundUp(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(math.Ceil(d.Seconds())))
	}
	s := (time.Duration(math.Ceil(d.Minutes())) * time.Minute).String()
	return strings.TrimSuffix(s, "0s")
}

// stepPlan is where a canary stands among its steps. steps is nil for a
// canary without steps, which is one step of replicas nodes for duration.
type stepPlan struct {
	strategy *v1alpha1.CanaryStrategy
	steps    []v1alpha1.CanaryStep
	counts   []int
	index    int
}

// planOf resolves the canary's steps against the nodes and places st on
// them: a canary starts at step 1, whose clock is the canary's.
func planOf(in Input, st *v1alpha1.CanaryStatus) (stepPlan, error) {
	p := stepPlan{strategy: in.Strategy}
	if len(in.Strategy.Steps) == 0 {
		// A spec that dropped its steps leaves a one-step canary: what
		// was recorded of the steps no longer describes it. Without
		// steps, StepStartedAt is when the canary's duration last started
		// over for new nodes; the last step's start is kept as that, since
		// the nodes that step added have run only since then.
		st.Step, st.Steps = 0, nil
		n, err := Count(in.Strategy.Replicas, in.Desired)
		p.counts = []int{n}
		return p, err
	}
	counts, err := StepCounts(in.Strategy.Steps, in.Desired)
	if err != nil {
		return p, err
	}
	p.steps, p.counts = in.Strategy.Steps, counts
	if st.Step == 0 {
		enterStep(st, p.steps, 0, st.StartedAt.Time)
	}
	p.index = currentStep(st, p.steps)
	return p, nil
}

// want is the number of canary nodes of the current step.
func (p stepPlan) want() int { return p.counts[p.index] }

// recordNodes writes the number of canary nodes into the current step's
// record.
func (p stepPlan) recordNodes(st *v1alpha1.CanaryStatus) {
	if rec := runningStep(st); rec != nil {
		rec.Nodes = int32(len(st.Nodes)) //nolint:gosec // bounded by the nodes of a cluster
	}
}

// startedAt is when the current step's duration started: the step's
// start, or without steps the canary's, unless its nodes changed since.
func (p stepPlan) startedAt(st *v1alpha1.CanaryStatus) time.Time {
	if st.StepStartedAt != nil {
		return st.StepStartedAt.Time
	}
	return st.StartedAt.Time
}

// duration is how long the current step runs at least.
func (p stepPlan) duration() time.Duration {
	switch {
	case p.steps != nil:
		return stepDuration(p.steps[p.index])
	case p.strategy.Duration != nil:
		return p.strategy.Duration.Duration
	}
	return defaultDuration
}

// last says whether the current step is the canary's last.
func (p stepPlan) last() bool { return p.steps == nil || p.index == len(p.steps)-1 }

// going says what follows the current step.
func (p stepPlan) going() string {
	if p.last() {
		return "promoting"
	}
	return fmt.Sprintf("going on to step %d", p.index+2)
}

// gates holds the canary st at the gates of what follows its current
// step: confirm-promotion after the last, confirm-step before the next.
func (p stepPlan) gates(in Input, st *v1alpha1.CanaryStatus) gateHold {
	if p.last() {
		return gatesAt(in, st, v1alpha1.WebhookConfirmPromotion, 0)
	}
	return gatesAt(in, st, v1alpha1.WebhookConfirmStep, int32(p.index+2)) //nolint:gosec // steps are at most MaxCanarySteps
}

// next ends the current step with result: after the last, the canary is
// promoted; otherwise the next step starts now, adding its nodes to the
// ones the canary has.
func (p stepPlan) next(in Input, st *v1alpha1.CanaryStatus, res Result, result v1alpha1.CanaryStepResult) Result {
	if p.last() {
		res.Promote = true
		return res
	}
	finishStep(st, result, in.Now)
	enterStep(st, p.steps, p.index+1, in.Now)
	st.Nodes = SelectNodes(in.Candidates, p.counts[p.index+1], in.Strategy.NodeAntiAffinityKeys, st.Nodes)
	st.Paused, st.Reason, st.Message = false, "", ""
	p.index++
	p.recordNodes(st)
	res.RequeueAfter = stepDuration(p.steps[p.index])
	return res
}
