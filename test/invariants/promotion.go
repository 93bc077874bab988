package invariants

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// canaryInstance is one run of a canary: its replica set from one start.
// The same template applied again, or a failed canary retried, starts
// another instance of the same replica set, which earns its promotion anew:
// what the earlier one ran, measured or was given does not count.
type canaryInstance struct {
	replicaSet string
	startedAt  time.Time
	// last is the latest status seen of the instance.
	last *v1alpha1.CanaryStatus
	// unjudged and passed are, by step (0 without steps), whether the
	// instance was seen without a Successful analysis, and after that with
	// one: an analysis passed since the instance's (or step's) start only
	// if it was seen not passed yet first, as every instance starts.
	unjudged, passed map[int32]bool
}

func newInstance(cs *v1alpha1.CanaryStatus) *canaryInstance {
	return &canaryInstance{replicaSet: cs.ReplicaSet, startedAt: startOf(cs), unjudged: map[int32]bool{}, passed: map[int32]bool{}}
}

func (i *canaryInstance) is(cs *v1alpha1.CanaryStatus) bool {
	return i != nil && i.replicaSet == cs.ReplicaSet && i.startedAt.Equal(startOf(cs))
}

func startOf(cs *v1alpha1.CanaryStatus) time.Time {
	if cs.StartedAt == nil {
		return time.Time{}
	}
	return cs.StartedAt.Time
}

// stepStart is when step (from 1) of the instance recorded in cs started:
// its record, the current step's start, or the canary's for step 1.
func stepStart(cs *v1alpha1.CanaryStatus, step int32) time.Time {
	for _, rec := range cs.Steps {
		if rec.Step == step && !rec.StartedAt.IsZero() {
			return rec.StartedAt.Time
		}
	}
	if cs.Step == step && cs.StepStartedAt != nil {
		return cs.StepStartedAt.Time
	}
	return startOf(cs)
}

// steeringSource is where a person gives a value that promotes a canary or
// moves it on.
type steeringSource string

const (
	validateAnnotation steeringSource = "annotation " + v1alpha1.CanaryValidatedAnnotation
	validateSpec       steeringSource = "spec.strategy.canary.validate"
	skipAnnotation     steeringSource = "annotation " + v1alpha1.CanarySkipStepAnnotation
	skipSpec           steeringSource = "spec.strategy.canary.skipStep"
)

// given is a steering value and when it was first seen with that value.
type given struct {
	value string
	since time.Time
}

// observeSteering records when each steering value changed to what eds
// says now.
func (s *setState) observeSteering(now time.Time) {
	values := map[steeringSource]string{
		validateAnnotation: s.eds.Annotations[v1alpha1.CanaryValidatedAnnotation],
		skipAnnotation:     s.eds.Annotations[v1alpha1.CanarySkipStepAnnotation],
	}
	if c := s.eds.Spec.Strategy.Canary; c != nil {
		values[validateSpec], values[skipSpec] = c.Validate, c.SkipStep
	}
	for src, v := range values {
		if s.steering[src].value != v || (v != "" && s.steering[src].since.IsZero()) {
			s.steering[src] = given{value: v, since: now}
		}
	}
}

// givenSince says whether one of sources holds a value that names says
// is for the canary, given at or after start: a value left from before is
// not given for what started later, whatever it names. start comes from
// the controller's status, written in whole seconds, so a value given
// within the second before counts.
func (s *setState) givenSince(start time.Time, names func(string) bool, sources ...steeringSource) bool {
	for _, src := range sources {
		if g := s.steering[src]; g.value != "" && names(g.value) && !g.since.Before(start.Truncate(time.Second)) {
			return true
		}
	}
	return false
}

// namesReplicaSet says whether a validate value names replica set rs: the
// name alone, or with the instance it was given for after an "@". Which
// instance a value is for is judged by when it was given, not by what it
// says.
func namesReplicaSet(value, rs string) bool {
	name, _, _ := strings.Cut(value, "@")
	return name == rs
}

// validated says whether a person validated the instance of replica set rs
// that started at start.
func (s *setState) validated(rs string, start time.Time) bool {
	return s.givenSince(start, func(v string) bool { return namesReplicaSet(v, rs) }, validateAnnotation, validateSpec)
}

// skipped says whether a person asked to skip step of the instance of rs
// recorded in cs since that step started: a value "<replica set>/<step>"
// (the replica set as validate names it), or, for the annotation, the bare
// step number.
func (s *setState) skipped(rs string, cs *v1alpha1.CanaryStatus, step int32) bool {
	n := strconv.Itoa(int(step))
	names := func(v string) bool {
		i := strings.LastIndex(v, "/")
		return i >= 0 && v[i+1:] == n && namesReplicaSet(v[:i], rs)
	}
	start := stepStart(cs, step)
	return s.givenSince(start, func(v string) bool { return v == n || names(v) }, skipAnnotation) ||
		s.givenSince(start, names, skipSpec)
}

// observeCanary follows the canary instance the status shows, judges each
// step it went past, and keeps what its analysis showed.
func (c *Checker) observeCanary(s *setState, now time.Time) {
	cs := s.eds.Status.Canary
	if cs == nil {
		return
	}
	inst := s.instance
	switch {
	case !inst.is(cs):
		if inst != nil && inst.replicaSet == cs.ReplicaSet {
			c.note(now, "eds %s: canary %s started again", s.eds.Name, cs.ReplicaSet)
		}
		inst = newInstance(cs)
		s.instance = inst
	case inst.last != nil && inst.last.Step > 0 && cs.Step > inst.last.Step:
		for step := inst.last.Step; step < cs.Step; step++ {
			c.checkStepEnd(s, inst, cs, step, now)
		}
	}
	if a := cs.Analysis; a == nil || a.Phase != v1alpha1.AnalysisSuccessful {
		inst.unjudged[cs.Step] = true
	} else if inst.unjudged[cs.Step] {
		inst.passed[cs.Step] = true
	}
	inst.last = cs.DeepCopy()
}

// checkStepEnd judges the canary cs going on from step: a person skipped
// it since it started, or it ran its duration and, with an analysis, the
// instance was seen pass it during the step.
func (c *Checker) checkStepEnd(s *setState, inst *canaryInstance, cs *v1alpha1.CanaryStatus, step int32, now time.Time) {
	strategy := s.eds.Spec.Strategy.Canary
	if strategy == nil || int(step) > len(strategy.Steps) {
		return
	}
	eds, rs := s.eds.Name, cs.ReplicaSet
	if s.skipped(rs, cs, step) || s.validated(rs, inst.startedAt) {
		return
	}
	spec := strategy.Steps[step-1]
	if spec.Pause {
		c.violate(now, EarlyPromotion, "eds %s: canary %s went on from its pause step %d with no skip given since the step started", eds, rs, step)
		return
	}
	if ran, d := now.Sub(stepStart(cs, step)), spec.Duration; d != nil && ran < d.Duration {
		c.violate(now, EarlyPromotion, "eds %s: canary %s went on from step %d after %s, the step's duration is %s, and no skip was given since the step started",
			eds, rs, step, ran.Round(time.Millisecond), d.Duration)
		return
	}
	if strategy.Analysis != nil && !inst.passed[step] {
		c.violate(now, EarlyPromotion, "eds %s: canary %s went on from step %d without its analysis seen Successful during the step", eds, rs, step)
	}
}

// checkPromotion judges a change of active replica set to a canary's: the
// canary instance running just before must be of that replica set and not
// failed, and a person must have validated that instance (or skipped its
// last step) since it started, or it ran its duration (with steps, the
// durations of the steps not skipped) since it started and, with an
// analysis, was seen pass it since it started (with steps, every step that
// ended on its own too). Without a canary strategy nothing is judged.
func (c *Checker) checkPromotion(s *setState, before *v1alpha1.ExtendedDaemonSet, now time.Time) {
	eds := s.eds
	if before == nil || before.Status.ActiveReplicaSet == "" || eds.Status.ActiveReplicaSet == before.Status.ActiveReplicaSet {
		return
	}
	promoted, strategy, prev := eds.Status.ActiveReplicaSet, eds.Spec.Strategy.Canary, before.Status.Canary
	if strategy == nil {
		return
	}
	if prev == nil || prev.ReplicaSet != promoted {
		running := "none"
		if prev != nil {
			running = prev.ReplicaSet
		}
		c.violate(now, EarlyPromotion, "eds %s: %s promoted with no canary of it running (running: %s)", eds.Name, promoted, running)
		return
	}
	c.note(now, "eds %s: canary %s promoted", eds.Name, promoted)
	inst := s.instance
	if !inst.is(prev) {
		inst = newInstance(prev)
	}
	if prev.StartedAt == nil {
		c.violate(now, EarlyPromotion, "eds %s: canary %s promoted with no start time", eds.Name, promoted)
		return
	}
	if prev.Failed {
		c.violate(now, EarlyPromotion, "eds %s: canary %s promoted though it failed", eds.Name, promoted)
		return
	}
	if s.validated(promoted, inst.startedAt) {
		return
	}
	if n := int32(len(strategy.Steps)); n > 0 && prev.Step == n && s.skipped(promoted, prev, n) { //nolint:gosec // steps are at most MaxCanarySteps
		return
	}
	if len(prev.Nodes) == 0 && len(s.desired) > 0 {
		c.violate(now, EarlyPromotion, "eds %s: canary %s promoted on no canary node, with %d nodes to run on", eds.Name, promoted, len(s.desired))
		return
	}
	c.promotions = append(c.promotions, promotion{eds: eds.Name, replicaSet: promoted, nodes: slices.Clone(prev.Nodes), at: now})
	if step := unjudgedStep(strategy, prev); step != "" {
		c.violate(now, EarlyPromotion, "eds %s: canary %s promoted though its %s", eds.Name, promoted, step)
		return
	}
	duration := promotionDuration(strategy, prev)
	if ran := now.Sub(inst.startedAt); ran < duration {
		c.violate(now, EarlyPromotion, "eds %s: canary %s promoted after %s, its duration is %s, and no validation was given since it started",
			eds.Name, promoted, ran.Round(time.Millisecond), duration)
		return
	}
	if strategy.Analysis != nil && !inst.passed[prev.Step] {
		phase := v1alpha1.AnalysisPhase("none")
		if prev.Analysis != nil {
			phase = prev.Analysis.Phase
		}
		c.violate(now, EarlyPromotion, "eds %s: canary %s promoted with its analysis %s, not seen pass since it started", eds.Name, promoted, phase)
	}
}

// promotion is a canary promoted on its own, whose nodes are judged once
// the other watches had their grace to tell of its pods.
type promotion struct {
	eds, replicaSet string
	nodes           []string
	at              time.Time
}

// settlePromotions judges the promotions whose grace has passed (all of
// them when flush is set): each canary node must have run an available
// canary pod, on a Ready node, when the canary was promoted or within the
// reaction time before. A canary judged on a node that died, or on a pod
// that crashed, was judged on nothing there.
func (c *Checker) settlePromotions(now time.Time, flush bool) {
	keep := c.promotions[:0]
	for _, p := range c.promotions {
		if !flush && now.Sub(p.at) < c.grace() {
			keep = append(keep, p)
			continue
		}
		var unjudged []string
		for _, node := range p.nodes {
			if c.availableAt(p.eds, node, p.replicaSet, p.at) {
				continue
			}
			unjudged = append(unjudged, node)
		}
		if len(unjudged) > 0 {
			c.violate(p.at, EarlyPromotion, "eds %s: canary %s promoted though %d of its %d nodes had no available canary pod on a Ready node: %s",
				p.eds, p.replicaSet, len(unjudged), len(p.nodes), strings.Join(unjudged, ", "))
		}
	}
	c.promotions = keep
}

// availableAt says whether node had an available pod of replicaSet, on a
// Ready node, at at or within the reaction time before (the controller's
// view lags), or has one now (its watch told it before the monitor's).
func (c *Checker) availableAt(eds, node, replicaSet string, at time.Time) bool {
	if last, ok := c.lastAvailable[node+"/"+replicaSet]; ok && !last.Before(at.Add(-c.reactionTime())) {
		return true
	}
	for uid := range c.onNode[eds+"/"+node] {
		if p := c.pods[uid]; p.replicaSet == replicaSet && c.podAvailable(p) {
			return true
		}
	}
	return false
}
