package invariants

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// Hanging: a change of template or of a steering value left the
// ExtendedDaemonSet neither Ready nor Stalled nor waiting for a person
// longer than its spec allows (progressDeadlineSeconds, the canary's
// duration or steps, its analysis, a domain's bake) plus the slack, counted
// from the last thing that moved: the change, a node gaining an available
// pod of a replica set (or losing one), a node changing, a container of the
// running canary restarting.
const Hanging Rule = "Hanging"

// DefaultDeadlineSlack is the reaction delay the Hanging rule gives the
// controller on top of what the spec allows: its watches lag, its passes
// queue, and a busy machine slows both.
const DefaultDeadlineSlack = 30 * time.Second

// defaultProgressDeadline is the schema's default progressDeadlineSeconds.
const defaultProgressDeadline = 600 * time.Second

// episode is a change of an ExtendedDaemonSet's template or steering
// values, followed until the rollout ends.
type episode struct {
	cause string
	start time.Time
	// last is when something last moved: the change, progress, a node or
	// a canary restart.
	last time.Time
	// baseline is the status when the change was seen: a steering value
	// leaves the status as it was until the controller reacts, so only
	// another status ends the episode before its deadline.
	baseline string
	settled  bool
	reported bool
	// moved are the "node/replicaSet" pairs that gained an available pod,
	// and the "-node/replicaSet" ones that lost a pod, since the change:
	// each counts as progress once, so a pod that flaps, or is evicted
	// and created again, does not hold the deadline off.
	moved map[string]bool
}

// steeringAnnotations are the annotations a person steers a rollout with:
// a change of one is a change the rollout must answer.
var steeringAnnotations = []string{
	v1alpha1.CanaryValidatedAnnotation, v1alpha1.CanaryPausedAnnotation, v1alpha1.CanaryUnpausedAnnotation,
	v1alpha1.CanarySkipStepAnnotation, v1alpha1.CanaryFailedAnnotation, v1alpha1.CanaryRetryAnnotation,
	v1alpha1.RollingUpdatePausedAnnotation, v1alpha1.RolloutFrozenAnnotation,
}

// steeringChange names the steering annotations whose value differs
// between before and after.
func steeringChange(before, after *v1alpha1.ExtendedDaemonSet) string {
	var changed []string
	for _, a := range steeringAnnotations {
		if before.Annotations[a] != after.Annotations[a] {
			changed = append(changed, fmt.Sprintf("%s=%q", a, after.Annotations[a]))
		}
	}
	return strings.Join(changed, ", ")
}

// statusDigest is what tells a status written after a change from the one
// before it.
func statusDigest(eds *v1alpha1.ExtendedDaemonSet) string {
	st := eds.Status
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s", st.ObservedGeneration, st.ActiveReplicaSet)
	for _, c := range st.Conditions {
		fmt.Fprintf(&b, " %s=%s/%s", c.Type, c.Status, c.Reason)
	}
	if cs := st.Canary; cs != nil {
		fmt.Fprintf(&b, " canary %s %v step %d paused=%t failed=%t %s", cs.ReplicaSet, startOf(cs).Unix(), cs.Step, cs.Paused, cs.Failed, cs.Reason)
	}
	return b.String()
}

// waitingForAPerson are the Reconciling reasons of a rollout that waits
// for a person: an explicit pause or freeze, a paused canary, an old
// DaemonSet to delete.
var waitingForAPerson = []string{
	v1alpha1.ReasonCanaryPaused, v1alpha1.ReasonRolloutFrozen, v1alpha1.ReasonRollingUpdatePaused, v1alpha1.ReasonWaitingForOldDaemonSet,
}

// ended says how eds's rollout of its current generation ended: Ready,
// Stalled, or waiting for a person; empty while it goes on.
func ended(eds *v1alpha1.ExtendedDaemonSet) string {
	st := eds.Status
	if st.ObservedGeneration != eds.Generation {
		return ""
	}
	if apimeta.IsStatusConditionTrue(st.Conditions, v1alpha1.ReadyCondition) {
		return "Ready"
	}
	if c := apimeta.FindStatusCondition(st.Conditions, v1alpha1.StalledCondition); c != nil && c.Status == metav1.ConditionTrue {
		return "Stalled (" + c.Reason + ")"
	}
	if c := apimeta.FindStatusCondition(st.Conditions, v1alpha1.ReconcilingCondition); c != nil && c.Status == metav1.ConditionTrue &&
		slices.Contains(waitingForAPerson, c.Reason) {
		return "waiting for a person (" + c.Reason + ")"
	}
	return ""
}

// where tells where eds's rollout stands, for a Hanging message.
func where(eds *v1alpha1.ExtendedDaemonSet) string {
	st := eds.Status
	out := fmt.Sprintf("observedGeneration %d of %d, state %s", st.ObservedGeneration, eds.Generation, st.State)
	for _, c := range st.Conditions {
		if c.Type == v1alpha1.ReadyCondition || c.Type == v1alpha1.ReconcilingCondition || c.Type == v1alpha1.StalledCondition {
			out += fmt.Sprintf(", %s=%s %s: %q", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	return out
}

// trackEpisode opens an episode on a change of template (a new
// generation) or of a steering annotation, and closes it once a status
// written since says the rollout ended.
func (c *Checker) trackEpisode(s *setState, before *v1alpha1.ExtendedDaemonSet, now time.Time) {
	eds := s.eds
	cause := ""
	switch {
	case before == nil:
		cause = fmt.Sprintf("generation %d first seen", eds.Generation)
	case before.Generation != eds.Generation:
		cause = fmt.Sprintf("generation %d", eds.Generation)
	default:
		cause = steeringChange(before, eds)
	}
	if cause != "" {
		baseline := ""
		if before != nil {
			baseline = statusDigest(eds)
		}
		s.episode = &episode{cause: cause, start: now, last: now, baseline: baseline, moved: map[string]bool{}}
	}
	ep := s.episode
	if ep == nil || ep.settled {
		return
	}
	if how := ended(eds); how != "" && statusDigest(eds) != ep.baseline {
		ep.settled = true
		c.note(now, "eds %s: %s ended %s after %s", eds.Name, ep.cause, how, now.Sub(ep.start).Round(time.Millisecond))
	}
}

// moved pushes the deadline of every open episode of eds (all of them when
// eds is empty) to now; with key, only the first time key moves.
func (c *Checker) moved(eds, key string, now time.Time) {
	for name, s := range c.sets {
		ep := s.episode
		if (eds != "" && name != eds) || ep == nil || ep.settled {
			continue
		}
		if key != "" {
			if ep.moved[key] {
				continue
			}
			ep.moved[key] = true
		}
		ep.last = now
	}
}

// nodeShape is what of a node a rollout answers to: readiness,
// schedulability, maintenance, labels, taints.
func nodeShape(node *corev1.Node) string {
	keys := make([]string, 0, len(node.Labels))
	for k, v := range node.Labels {
		keys = append(keys, k+"="+v)
	}
	sort.Strings(keys)
	return fmt.Sprintf("%t %t %q %v %v", nodeReady(node), node.Spec.Unschedulable, placement.Maintenance(node), keys, node.Spec.Taints)
}

// allowance is how long eds's rollout may go on after the last thing that
// moved, with what it is made of: the progress deadline, then a canary's
// whole run (its duration or steps, its no-restart window, a slow start,
// its analysis), then a domain's bake and its analysis.
func (c *Checker) allowance(eds *v1alpha1.ExtendedDaemonSet) (time.Duration, string) {
	parts := []string{}
	total := time.Duration(0)
	add := func(what string, d time.Duration) {
		if d > 0 {
			total += d
			parts = append(parts, fmt.Sprintf("%s %s", what, d))
		}
	}
	deadline := defaultProgressDeadline
	if s := eds.Spec.ProgressDeadlineSeconds; s != nil && *s > 0 {
		deadline = time.Duration(*s) * time.Second
	}
	add("progressDeadlineSeconds", deadline)
	strategy := eds.Spec.Strategy
	if cs := strategy.Canary; cs != nil {
		add("canary", canaryRun(cs))
		add("noRestartsDuration", durationOf(cs.NoRestartsDuration))
		if p := cs.AutoPause; p != nil {
			add("maxSlowStartDuration", durationOf(p.MaxSlowStartDuration))
		}
		add("analysis", analysisRun(cs.Analysis))
	}
	if t := strategy.RollingUpdate.Topology; t != nil {
		add("domainBakeTime", durationOf(t.DomainBakeTime))
		if cs := strategy.Canary; cs != nil {
			add("bake analysis", analysisRun(cs.Analysis))
		}
	}
	add("slack", c.deadlineSlack())
	return total, strings.Join(parts, " + ")
}

// canaryRun is how long a canary runs when nothing stops it: its steps'
// durations together, its duration (the default when unset), or nothing
// for a manual canary, which waits for a person.
func canaryRun(cs *v1alpha1.CanaryStrategy) time.Duration {
	switch {
	case len(cs.Steps) > 0:
		var d time.Duration
		for _, step := range cs.Steps {
			d += durationOf(step.Duration)
		}
		return d
	case cs.ValidationMode == v1alpha1.CanaryValidationManual:
		return 0
	case cs.Duration != nil:
		return cs.Duration.Duration
	}
	d, _ := time.ParseDuration(v1alpha1.DefaultCanaryDuration)
	return d
}

// analysisRun bounds how long an analysis takes to conclude: its initial
// delay, then one interval per measurement its limits allow and two more.
func analysisRun(a *v1alpha1.CanaryAnalysis) time.Duration {
	if a == nil {
		return 0
	}
	interval := time.Minute
	if a.Interval != nil {
		interval = a.Interval.Duration
	}
	limit := func(v *int32, def int32) time.Duration {
		if v == nil {
			return time.Duration(def)
		}
		return time.Duration(*v)
	}
	measurements := limit(a.FailureLimit, 0) + limit(a.InconclusiveLimit, 0) + limit(a.ConsecutiveErrorLimit, 4) + 2
	return durationOf(a.InitialDelay) + measurements*interval
}

func durationOf(d *metav1.Duration) time.Duration {
	if d == nil {
		return 0
	}
	return d.Duration
}

func (c *Checker) deadlineSlack() time.Duration {
	if c.DeadlineSlack > 0 {
		return c.DeadlineSlack
	}
	return DefaultDeadlineSlack
}

// checkDeadlines fails once for each episode past its deadline whose
// rollout has not ended. One whose status shows it ended, though no
// status was written since the change (a steering value with nothing to
// act on), ended.
func (c *Checker) checkDeadlines(now time.Time) {
	for _, s := range c.sets {
		ep := s.episode
		if ep == nil || ep.settled || ep.reported {
			continue
		}
		allowed, parts := c.allowance(s.eds)
		if now.Sub(ep.last) < allowed {
			continue
		}
		if how := ended(s.eds); how != "" {
			ep.settled = true
			c.note(now, "eds %s: %s ended %s, status unchanged", s.eds.Name, ep.cause, how)
			continue
		}
		ep.reported = true
		c.violate(now, Hanging, "eds %s: %s (at %s) neither Ready nor Stalled nor waiting for a person %s after it and %s after the last progress, node change or canary restart; allowed %s; %s",
			s.eds.Name, ep.cause, ep.start.Format("15:04:05.000"), now.Sub(ep.start).Round(time.Second), now.Sub(ep.last).Round(time.Second),
			parts, where(s.eds))
	}
}

// Unsettled lists the changes whose rollout has not ended yet, with how
// long until their deadline.
func (c *Checker) Unsettled(now time.Time) []string {
	var out []string
	for name, s := range c.sets {
		ep := s.episode
		if ep == nil || ep.settled || ep.reported {
			continue
		}
		allowed, _ := c.allowance(s.eds)
		out = append(out, fmt.Sprintf("eds %s: %s, deadline in %s", name, ep.cause, ep.last.Add(allowed).Sub(now).Round(time.Second)))
	}
	sort.Strings(out)
	return out
}
