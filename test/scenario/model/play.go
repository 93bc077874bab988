package model

import (
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/test/scenario"
)

// Play plays seq on the cluster, checking every promise after every
// controller pass, then lets time pass quietly until the last template
// change has ended or quiet has passed. It returns the promises broken,
// the first of each kind: a broken promise does not stop the play, so one
// known to be broken does not hide the others.
func (c *Cluster) Play(seq []scenario.Action, quiet time.Duration) []Violation {
	for i, a := range seq {
		c.step = i + 1
		c.Do(a)
	}
	c.step = len(seq) + 1
	c.checkSpec()
	for end := c.now.Add(quiet); c.now.Before(end); {
		if c.ended() != "" {
			return c.violations
		}
		c.advance(tick)
	}
	if why := c.ended(); why == "" {
		c.violate(NeverEnds, fmt.Sprintf("%s after the last action the rollout neither is Ready nor Stalled nor waits for a person: %s", quiet, c.describe()))
	}
	return c.violations
}

// Do plays one action, then lets the controller react.
func (c *Cluster) Do(a scenario.Action) {
	// Only people write the spec, and the next write of theirs would hide
	// one of the controller's: look before it.
	c.checkSpec()
	if a.Kind != scenario.Wait {
		// No two actions happen at one instant: the controller's passes
		// after them read different times, as real clocks do (a canary
		// instance is told from another by its start).
		c.now = c.now.Add(actionGap)
	}
	switch a.Kind {
	case scenario.Wait:
		c.advance(a.Delay)
		return
	case scenario.ApplyTemplate:
		k := a.Template
		if a.LastFailed && c.failedTemplate >= 0 {
			k = c.failedTemplate
		}
		c.applyTemplate(k)
	case scenario.Rollback:
		if k, ok := c.revisionBack(a.Index); ok {
			c.applyTemplate(k)
		}
	case scenario.Steer:
		if inst := c.running(); inst != nil && a.Steer == scenario.FailCanary && c.steerTarget(a) == inst.replicaSet &&
			(a.Via == scenario.ViaAnnotation || c.flags.canary) {
			// Checked after the passes that follow, with the value steer
			// writes: a later write may replace it before a pass reads it.
			defer func() { c.checkFailed(failGiven{inst: inst, via: a.Via, value: c.failValue(a.Via)}) }()
		}
		c.steer(a)
	case scenario.PauseRollingUpdate, scenario.UnpauseRollingUpdate:
		c.toggleValue(a.Via, v1alpha1.RollingUpdatePausedAnnotation, &c.twins.rollingPaused, a.Kind == scenario.PauseRollingUpdate)
	case scenario.Freeze, scenario.Unfreeze:
		c.toggleValue(a.Via, v1alpha1.RolloutFrozenAnnotation, &c.twins.frozen, a.Kind == scenario.Freeze)
	case scenario.PauseCanary, scenario.UnpauseCanary:
		c.toggleValue(a.Via, v1alpha1.CanaryPausedAnnotation, &c.twins.canaryPaused, a.Kind == scenario.PauseCanary)
	case scenario.AddNode:
		n := c.addNode(a.Zone % c.cfg.Zones)
		if c.ds != nil {
			c.daemonSetPod(n.Name, false)
		}
	case scenario.RemoveNode, scenario.CordonNode, scenario.UncordonNode, scenario.NodeNotReady, scenario.NodeReady,
		scenario.DrainNode, scenario.DisruptNode:
		c.nodeAction(a)
	case scenario.PodFails, scenario.PodCrashLoops, scenario.PodEvicted, scenario.PodReady:
		c.podAction(a)
	case scenario.AnalysisVerdict:
		c.verdict(a)
	case scenario.Toggle:
		c.toggle(a.Setting, a.On)
	case scenario.HoldKubelet:
		c.hold = a.On
	}
	c.publish()
	c.settle()
}

// applyTemplate is a person applying template k: the ExtendedDaemonSet's,
// or, with a workloadRef, the DaemonSet's (a revert is applying the
// earlier one again, in git; a rollback writes it as kubectl eds rollback
// does with its flag).
func (c *Cluster) applyTemplate(k int) {
	if c.workload != nil && k != c.workload.template {
		c.daemonSetTemplateChanged()
	}
	c.template = k
}

// advance lets d pass, a tick at a time: the kubelet acts, then, with a
// workloadRef, the DaemonSet's controller, then the controller.
//
// The controller runs on events and on the requeues it asked for, as its
// reconcilers do: a round in which the kubelet changed nothing and no
// requeue came due runs no pass, so a decision that waits on time alone
// without asking to be woken up waits forever. The DaemonSet's pods are
// watched by none of its reconcilers: only a change of the DaemonSet's
// status wakes them.
func (c *Cluster) advance(d time.Duration) {
	for d > 0 {
		dt := min(d, tick)
		d -= dt
		c.now = c.now.Add(dt)
		woke := c.kubelet()
		if c.workload != nil {
			woke = c.daemonSetController()
		}
		if woke || (!c.requeueAt.IsZero() && !c.now.Before(c.requeueAt)) {
			c.settle()
		} else {
			c.check()
		}
	}
}

// requeue asks for a pass after d, as a reconcile's RequeueAfter does;
// zero asks for none.
func (c *Cluster) requeue(d time.Duration) {
	if d <= 0 {
		return
	}
	if at := c.now.Add(d); c.requeueAt.IsZero() || at.Before(c.requeueAt) {
		c.requeueAt = at
	}
}

// settle runs the controller until nothing changes (at most a few rounds,
// as watch events would): the ExtendedDaemonSet pass, then each replica
// set's, checking the promises after each.
func (c *Cluster) settle() {
	// Every pass asks again for what it waits on.
	c.requeueAt = time.Time{}
	for range 4 {
		before := c.fingerprint()
		c.edsPass()
		c.check()
		for _, ers := range c.sortedSets() {
			c.rsPass(ers)
			c.check()
		}
		if c.fingerprint() == before {
			return
		}
	}
}

// fingerprint is what a pass can change that another pass reads, to see
// when passes settle: the roles, the bake, the pods written and the
// replica sets' status, which the ExtendedDaemonSet's reconciler watches.
type fingerprint struct {
	active, canary string
	step           int32
	nodes          int
	failed, paused bool
	bake           string
	writes         int
	sets           uint64
}

func (c *Cluster) fingerprint() fingerprint {
	st := c.eds.Status
	f := fingerprint{active: st.ActiveReplicaSet, writes: c.writes}
	if cs := st.Canary; cs != nil {
		f.canary, f.step, f.nodes, f.failed, f.paused = cs.ReplicaSet, cs.Step, len(cs.Nodes), cs.Failed, cs.Paused
	}
	if b := st.Bake; b != nil {
		f.bake = b.ReplicaSet + "/" + b.Domain + "/" + b.PassedThrough
	}
	h := fnv.New64a()
	for _, ers := range c.sortedSets() {
		s := ers.Status
		fmt.Fprint(h, ers.Name, s.Status, s.Desired, s.Current, s.Ready, s.Available, s.UpToDate)
		for _, d := range s.Domains {
			fmt.Fprint(h, d.Name, d.State, d.UpToDate)
		}
	}
	f.sets = h.Sum64()
	return f
}

func (c *Cluster) revisionBack(n int) (int, bool) {
	current := c.sets[c.currentName()]
	var earlier []*v1alpha1.ExtendedDaemonSetReplicaSet
	for _, ers := range c.sortedSets() {
		if current == nil || ers.Name != current.Name {
			earlier = append(earlier, ers)
		}
	}
	if len(earlier) == 0 {
		return 0, false
	}
	// Newest first: 1 is the revision before the current one.
	slices.Reverse(earlier)
	return c.templateOf[earlier[(n-1+len(earlier))%len(earlier)].Name], true
}

// steer gives a steering value for a replica set. For the running canary
// it is written as kubectl eds writes it (cmd/kubectl-eds/internal/steer:
// canary.SteeringValue, naming the instance; when that form changes, so
// must this one); for any other replica set, as a person writes it by
// hand, the replica set's name alone.
func (c *Cluster) steer(a scenario.Action) {
	target := c.steerTarget(a)
	named := &v1alpha1.CanaryStatus{ReplicaSet: target}
	var step int32 = 1
	if st := canary.Running(c.eds); st != nil && st.ReplicaSet == target {
		named = st
		step = max(st.Step, 1)
	}
	values := map[scenario.SteerKind]struct {
		annotation string
		twin       *string
		value      string
	}{
		scenario.Validate:         {v1alpha1.CanaryValidatedAnnotation, &c.twins.validate, canary.SteeringValue(named)},
		scenario.FailCanary:       {v1alpha1.CanaryFailedAnnotation, &c.twins.fail, canary.SteeringValue(named)},
		scenario.UnpauseAutoPause: {v1alpha1.CanaryUnpausedAnnotation, &c.twins.unpause, canary.SteeringValue(named)},
		scenario.SkipStep:         {v1alpha1.CanarySkipStepAnnotation, &c.twins.skipStep, canary.SkipValue(named, step)},
	}
	if a.Steer == scenario.Retry {
		c.retries++
		values[scenario.Retry] = struct {
			annotation string
			twin       *string
			value      string
		}{v1alpha1.CanaryRetryAnnotation, &c.twins.retry, fmt.Sprintf("retry-%d", c.retries)}
	}
	v, ok := values[a.Steer]
	if !ok {
		return
	}
	if a.Via == scenario.ViaSpec {
		if !c.flags.canary {
			// No canary block to write the twin into.
			return
		}
		*v.twin = v.value
	} else {
		c.annotations[v.annotation] = v.value
	}
	if a.Steer == scenario.SkipStep {
		c.skippedStep[target] = step
	}
	c.given(a.Steer, target, a.Via)
	if a.Steer == scenario.Retry {
		c.retryGiven()
	}
}

// steerTarget is the replica set name a steering value names.
func (c *Cluster) steerTarget(a scenario.Action) string {
	switch a.Target {
	case scenario.EarlierReplicaSet:
		current := c.currentName()
		var earlier []string
		for _, ers := range c.sortedSets() {
			if ers.Name != current {
				earlier = append(earlier, ers.Name)
			}
		}
		if len(earlier) == 0 {
			return current
		}
		slices.Reverse(earlier)
		return earlier[(max(a.Index, 1)-1)%len(earlier)]
	case scenario.MadeUpName:
		return edsName + "-made-up"
	}
	if st := c.eds.Status.Canary; st != nil && !st.Failed {
		return st.ReplicaSet
	}
	return c.currentName()
}

func (c *Cluster) toggleValue(via scenario.Via, annotation string, twin *bool, on bool) {
	switch {
	case via == scenario.ViaSpec && (annotation != v1alpha1.CanaryPausedAnnotation || c.flags.canary):
		*twin = on
	case on:
		c.annotations[annotation] = "true"
	default:
		delete(c.annotations, annotation)
	}
}

func (c *Cluster) nodeAction(a scenario.Action) {
	if len(c.nodes) == 0 {
		return
	}
	n := c.nodes[a.Index%len(c.nodes)]
	switch a.Kind {
	case scenario.RemoveNode:
		c.nodes = slices.DeleteFunc(c.nodes, func(x *corev1.Node) bool { return x == n })
		for name, p := range c.pods {
			if placement.TargetNode(p) == n.Name {
				delete(c.pods, name)
			}
		}
	case scenario.CordonNode:
		n.Spec.Unschedulable = true
		if !slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeUnschedulable }) {
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule})
		}
	case scenario.UncordonNode:
		n.Spec.Unschedulable = false
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeUnschedulable })
	case scenario.DrainNode:
		status := corev1.ConditionFalse
		if a.On {
			status = corev1.ConditionTrue
		}
		n.Status.Conditions = slices.DeleteFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool { return c.Type == placement.NodeDrainInProgress })
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: placement.NodeDrainInProgress, Status: status, LastTransitionTime: metav1.NewTime(c.now)})
	case scenario.DisruptNode:
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == karpenterDisrupted })
		if a.On {
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: karpenterDisrupted, Effect: corev1.TaintEffectNoSchedule})
		}
	case scenario.NodeNotReady:
		setNodeReady(n, corev1.ConditionUnknown, c.now, !c.cfg.Untainted)
		// The node lifecycle controller marks its pods not ready.
		for _, p := range c.pods {
			if placement.TargetNode(p) == n.Name {
				setPodReady(p, false, c.now)
			}
		}
	case scenario.NodeReady:
		setNodeReady(n, corev1.ConditionTrue, c.now, false)
	}
}

func (c *Cluster) podAction(a scenario.Action) {
	var pods []*corev1.Pod
	if a.Pod == scenario.CanaryPod {
		st := c.eds.Status.Canary
		if st == nil || st.Failed {
			return
		}
		for _, p := range c.edsPods() {
			if replicaSetOf(p) == st.ReplicaSet {
				pods = append(pods, p)
			}
		}
	} else {
		for _, p := range c.sortedPods() {
			if agent(p) {
				pods = append(pods, p)
			}
		}
	}
	pods = slices.DeleteFunc(pods, func(p *corev1.Pod) bool { return p.DeletionTimestamp != nil })
	if len(pods) == 0 {
		return
	}
	p := pods[a.Index%len(pods)]
	switch a.Kind {
	case scenario.PodFails:
		restart(p, c.now)
	case scenario.PodCrashLoops:
		c.crashLoop[p.Name] = true
		restart(p, c.now)
	case scenario.PodEvicted:
		p.DeletionTimestamp = &metav1.Time{Time: c.now}
	case scenario.PodReady:
		if n := c.node(placement.TargetNode(p)); n == nil || !nodeReady(n) {
			// No kubelet to report it.
			return
		}
		delete(c.crashLoop, p.Name)
		delete(c.held, p.Name)
		start(p, c.now)
	}
}

// restart ends the pod's container once: it counts a restart and is not
// ready until the kubelet starts it again.
func restart(p *corev1.Pod, now time.Time) {
	if len(p.Status.ContainerStatuses) == 0 {
		return
	}
	cs := &p.Status.ContainerStatuses[0]
	cs.RestartCount++
	cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", FinishedAt: metav1.Time{Time: now}}}
	cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: crashReason}}
	setPodReady(p, false, now)
}

// start makes the pod Running and Ready.
func start(p *corev1.Pod, now time.Time) {
	p.Status.Phase = corev1.PodRunning
	if p.Status.StartTime == nil {
		// The kubelet records when it first started the pod.
		p.Status.StartTime = &metav1.Time{Time: now}
	}
	if len(p.Status.ContainerStatuses) == 0 {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: container}}
	}
	p.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Time{Time: now}}}
	setPodReady(p, true, now)
}

// kubelet is one round of every kubelet: pods on vanished nodes are
// collected, deleted pods on Ready nodes go, created pods start unless
// held, crash-looping containers restart, and restarted ones come back.
// It reports whether it changed anything, which the controller hears of.
func (c *Cluster) kubelet() bool {
	changed := false
	for _, p := range c.sortedPods() {
		n := c.node(placement.TargetNode(p))
		switch {
		case n == nil:
			delete(c.pods, p.Name)
		case !nodeReady(n):
			continue
		case p.DeletionTimestamp != nil:
			delete(c.pods, p.Name)
			if c.ds != nil && p.Annotations[daemonSetPodAnnotation] != "" {
				// A DaemonSet recreates its pods.
				c.daemonSetPod(n.Name, false)
			}
		case c.held[p.Name]:
			if len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Waiting != nil {
				continue
			}
			p.Status.Phase = corev1.PodPending
			if p.Status.StartTime == nil {
				// Acknowledged by the kubelet, before its image is pulled.
				p.Status.StartTime = &metav1.Time{Time: c.now}
			}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: container, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: heldReason}}}}
		case c.crashLoop[p.Name] && podReady(p):
			restart(p, c.now)
		case !podReady(p):
			start(p, c.now)
		default:
			continue
		}
		changed = true
	}
	return changed
}

func (c *Cluster) verdict(a scenario.Action) {
	inst := c.running()
	if inst == nil {
		return
	}
	v := verdict{at: c.now.Add(a.Delay)}
	switch a.Verdict {
	case scenario.VerdictPass:
		v.phase = v1alpha1.AnalysisSuccessful
	case scenario.VerdictFail:
		v.phase = v1alpha1.AnalysisFailed
	case scenario.VerdictInconclusive:
		v.phase = v1alpha1.AnalysisInconclusive
	case scenario.VerdictNever:
		v.phase, v.at = v1alpha1.AnalysisInconclusive, c.now.Add(neverVerdictDelay)
	}
	inst.verdicts = append(inst.verdicts, v)
}

func (c *Cluster) toggle(s scenario.Setting, on bool) {
	if c.workload != nil && (s == scenario.InPlace || s == scenario.Handover) {
		// Refused with a workloadRef: the apply changes nothing.
		return
	}
	switch s {
	case scenario.CanarySteps:
		c.flags.steps = on
	case scenario.TopologyZones:
		c.flags.topology = on
	case scenario.InPlace:
		c.flags.inPlace = on
	case scenario.Handover:
		if !on && c.ds != nil {
			// Deleted with --cascade=orphan: its pods stay, without
			// controller, for the ExtendedDaemonSet to replace.
			c.ds = nil
			for _, p := range c.pods {
				if p.Annotations[daemonSetPodAnnotation] != "" {
					p.OwnerReferences = nil
				}
			}
		}
	case scenario.CanaryStrategy:
		if c.flags.canary != on {
			c.twins.validate, c.twins.fail, c.twins.unpause, c.twins.skipStep, c.twins.retry, c.twins.canaryPaused = "", "", "", "", "", false
		}
		c.flags.canary = on
	case scenario.ManualValidation:
		c.flags.manual = on
	case scenario.Analysis:
		c.flags.analysis = on
	}
}
