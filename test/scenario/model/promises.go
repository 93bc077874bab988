package model

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
	"github.com/extendeddaemonset/extendeddaemonset/test/scenario"
)

// Kind names a promise.
type Kind string

// The promises checked after every step.
const (
	// Budget: no more nodes than maxUnavailable lack an available agent
	// because the controller took it down, canary and rolling update
	// together; a node in maintenance (placement.InMaintenance) is left
	// out, as an unresponsive one is.
	Budget Kind = "budget"
	// DomainBudget: the same, per domain, with a topology.
	DomainBudget Kind = "domain-budget"
	// TwoAgents: no node runs two agents outside a surge, and no more
	// nodes surge than maxSurge.
	TwoAgents Kind = "two-agents"
	// Promotion: a canary (or its last step) is promoted only once that
	// instance ran its duration, its analysis passed since its start and
	// it was judged on a running pod, or a person validated that instance.
	Promotion Kind = "promotion"
	// NeverEnds: every template change ends Ready, Stalled, or waiting
	// for a person, within its deadlines once the actions stop.
	NeverEnds Kind = "never-ends"
	// SpecWritten: the controller never changes the spec.
	SpecWritten Kind = "spec-written"
	// ToldTwice: a canary instance fails and is promoted once (each
	// CanaryStarted or CanaryRetried is a new instance).
	ToldTwice Kind = "told-twice"
	// NotOurs: the controller deletes only agent pods.
	NotOurs Kind = "not-ours"
	// Counters: no status says more pods available than desired.
	Counters Kind = "counters"
	// FailIgnored: a person's fail for the running canary fails it at
	// once, whatever else holds it: at the pass after it, or, when that
	// pass could not decide, at the first that does, if the value is still
	// there for it to read (a person may replace it before).
	FailIgnored Kind = "fail-ignored"
	// FailedByNobody: a canary instance fails as failed by a person only
	// when a person failed it since it started; a value left from an
	// earlier instance acts on nothing.
	FailedByNobody Kind = "failed-by-nobody"
	// FailedHolds: with a workloadRef, once a canary fails the controller
	// deletes no pod on a node outside that canary's until the
	// DaemonSet's template changes or a person asks for a retry: the
	// DaemonSet would recreate it at the failed template.
	FailedHolds Kind = "failed-holds"
	// Unjudged: with a workloadRef, the controller deletes a pod only
	// where what the DaemonSet brings back is allowed there: the active
	// replica set's template anywhere, the running canary's on its nodes.
	// Anywhere else it would spread a template nobody judged.
	Unjudged Kind = "unjudged"
	// LeftAlone: the controller creates no pod on a node in maintenance
	// (placement.InMaintenance), a canary's included, and deletes none
	// there but to end a surge.
	LeftAlone Kind = "left-alone"
	// IncrementalPlan: a replica set's planner state (rollout.State), kept
	// from pass to pass and told only of the nodes whose statement changed,
	// plans exactly as rollout.Compute does from the whole input.
	IncrementalPlan Kind = "incremental-plan"
)

// Violation is a broken promise.
type Violation struct {
	Kind Kind
	// Step is the action (from 1) after which it broke; one past the
	// last during the quiet tail.
	Step int
	// At is the model time since the sequence began.
	At     time.Duration
	Detail string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s at step %d (t=%s): %s", v.Kind, v.Step, v.At, v.Detail)
}

// promises is what checking the promises needs to remember.
type promises struct {
	step       int
	start      time.Time
	violations []Violation
	// order is a logical clock: actions and passes in the order they
	// happened, as several happen at one model instant.
	order     int
	instances []*instance
	// disrupted are the nodes whose available agent the controller took
	// down, until they have one again.
	disrupted map[string]bool
	// givenAt is when (in order) a steering value was last given for a
	// replica set.
	givenAt map[string]map[scenario.SteerKind]int
	// skippedStep is the step a skip-step value last given for a replica
	// set named.
	skippedStep map[string]int32
	// rolesChanged: the last ExtendedDaemonSet pass changed the active
	// replica set or the running canary.
	rolesChanged bool
	// failedHold, with a workloadRef, is the failed canary that holds
	// every other node, until the DaemonSet's template changes or a retry
	// is given; nil when none does.
	failedHold *failedHold
	// failToCheck is a person's fail of a canary instance given while the
	// ExtendedDaemonSet's pass could not decide, checked at the next pass
	// that does; nil when there is none.
	failToCheck *failGiven
}

// failGiven is a person's fail of the running canary instance inst: the
// value written and where (annotation or spec twin), which a later write
// there replaces.
type failGiven struct {
	inst  *instance
	via   scenario.Via
	value string
}

// failedHold is a failed canary of the DaemonSet's pods: its replica set
// and its nodes.
type failedHold struct {
	replicaSet string
	nodes      []string
}

// instance is one run of a canary: a replica set and the start its status
// records. A template applied again, a rollback and a retry start new ones.
type instance struct {
	replicaSet     string
	startedAt      time.Time
	startOrder     int
	verdicts       []verdict
	analysisPassed bool
	told           map[string]int
	// joined is when each of its canary nodes last became one.
	joined map[string]time.Time
}

type verdict struct {
	at    time.Time
	phase v1alpha1.AnalysisPhase
}

func (p *promises) init() {
	p.disrupted = map[string]bool{}
	p.givenAt = map[string]map[scenario.SteerKind]int{}
	p.skippedStep = map[string]int32{}
}

// reset starts the record at the first action.
func (p *promises) reset(c *Cluster) {
	p.violations, p.start = nil, c.now
	p.disrupted = map[string]bool{}
}

func (c *Cluster) violate(kind Kind, detail string) {
	for _, v := range c.violations {
		if v.Kind == kind {
			return
		}
	}
	c.violations = append(c.violations, Violation{Kind: kind, Step: c.step, At: c.now.Sub(c.start), Detail: detail})
}

func (c *Cluster) given(kind scenario.SteerKind, replicaSet string, _ scenario.Via) {
	c.order++
	if c.givenAt[replicaSet] == nil {
		c.givenAt[replicaSet] = map[scenario.SteerKind]int{}
	}
	c.givenAt[replicaSet][kind] = c.order
}

func (c *Cluster) instanceOf(cs *v1alpha1.CanaryStatus) *instance {
	if cs == nil || cs.StartedAt == nil {
		return nil
	}
	for i := len(c.instances) - 1; i >= 0; i-- {
		if inst := c.instances[i]; inst.replicaSet == cs.ReplicaSet && inst.startedAt.Equal(cs.StartedAt.Time) {
			return inst
		}
	}
	return nil
}

// sameInstance says whether after records the canary instance before
// did: same replica set, same start.
func sameInstance(before, after *v1alpha1.CanaryStatus) bool {
	return before != nil && after != nil && before.ReplicaSet == after.ReplicaSet &&
		before.StartedAt != nil && after.StartedAt != nil && before.StartedAt.Equal(after.StartedAt)
}

// running is the instance of the running canary, nil when none runs.
func (c *Cluster) running() *instance { return c.instanceOf(canary.Running(c.eds)) }

// afterEDSPass records instances and transitions, and checks a promotion
// against the instance it ends.
func (c *Cluster) afterEDSPass(before *v1alpha1.ExtendedDaemonSetStatus, transition string) {
	c.order++
	st := &c.eds.Status
	if cs := st.Canary; cs != nil && cs.StartedAt != nil &&
		(transition == canary.Started || transition == canary.Retried || !sameInstance(before.Canary, cs)) {
		// Two instances may share a start (a template applied, changed and
		// applied again at one instant): the newer one is the one found.
		c.instances = append(c.instances, &instance{replicaSet: cs.ReplicaSet, startedAt: cs.StartedAt.Time, startOrder: c.order, told: map[string]int{}, joined: map[string]time.Time{}})
	}
	if cs := canary.Running(c.eds); cs != nil {
		if inst := c.instanceOf(cs); inst != nil {
			for name := range inst.joined {
				if !slices.Contains(cs.Nodes, name) {
					delete(inst.joined, name)
				}
			}
			for _, name := range cs.Nodes {
				if _, ok := inst.joined[name]; !ok {
					inst.joined[name] = c.now
				}
			}
		}
	}
	c.rolesChanged = st.ActiveReplicaSet != before.ActiveReplicaSet || !sameInstance(canary.Running(&v1alpha1.ExtendedDaemonSet{Status: *before}), canary.Running(c.eds))
	promoted := before.ActiveReplicaSet != "" && st.ActiveReplicaSet != before.ActiveReplicaSet && c.eds.Spec.Strategy.Canary != nil
	var ended *instance
	if promoted && before.Canary != nil && before.Canary.ReplicaSet == st.ActiveReplicaSet && !before.Canary.Failed {
		ended = c.instanceOf(before.Canary)
	}
	switch transition {
	case canary.Started, canary.Failed, canary.Promoted:
		inst := c.instanceOf(st.Canary)
		if transition == canary.Promoted {
			inst = ended
		}
		if inst != nil {
			if inst.told[transition]++; inst.told[transition] > 1 {
				c.violate(ToldTwice, fmt.Sprintf("%s told %d times for the canary of %s started at %s", transition, inst.told[transition], inst.replicaSet, inst.startedAt.Sub(c.start)))
			}
		}
	}
	if promoted {
		c.checkPromotion(before, ended)
	}
	if f := c.failToCheck; f != nil {
		c.failToCheck = nil
		if c.failValue(f.via) == f.value {
			c.checkFailed(*f)
		}
	}
	if cs := st.Canary; c.workload != nil && transition == canary.Failed && cs != nil {
		c.failedHold = &failedHold{replicaSet: cs.ReplicaSet, nodes: slices.Clone(cs.Nodes)}
	}
	if cs := st.Canary; transition == canary.Failed && cs != nil && cs.Reason == canary.ReasonManual {
		if inst := c.instanceOf(cs); inst != nil {
			if at, ok := c.givenAt[cs.ReplicaSet][scenario.FailCanary]; !ok || at < inst.startOrder {
				c.violate(FailedByNobody, fmt.Sprintf("canary %s started at t=%s failed by a person, but nobody failed it since it started: %s",
					cs.ReplicaSet, inst.startedAt.Sub(c.start), c.describe()))
			}
		}
	}
}

// checkCounters checks that no status counts more available pods than
// desired ones, the ExtendedDaemonSet's (summed from its replica sets) or
// a replica set's.
func (c *Cluster) checkCounters() {
	if st := c.eds.Status; st.Available > st.Desired {
		when := ""
		if c.rolesChanged {
			when = " in the pass that changed the replica sets' roles"
		}
		c.violate(Counters, fmt.Sprintf("the ExtendedDaemonSet's status says %d/%d available%s: %s", st.Available, st.Desired, when, c.describe()))
	}
	for _, ers := range c.sortedSets() {
		if st := ers.Status; st.Available > st.Desired && st.Status != v1alpha1.ReplicaSetUnknown {
			c.violate(Counters, fmt.Sprintf("replica set %s says %d/%d available: %s", ers.Name, st.Available, st.Desired, c.describe()))
		}
	}
}

// checkSpec checks the spec is still what people wrote.
func (c *Cluster) checkSpec() {
	if !equalSpec(&c.eds.Spec, &c.spec) {
		c.violate(SpecWritten, "the controller changed the spec of the ExtendedDaemonSet")
	}
}

func (c *Cluster) checkPromotion(before *v1alpha1.ExtendedDaemonSetStatus, inst *instance) {
	rs := c.eds.Status.ActiveReplicaSet
	if tmpl := c.peopleTemplate(); c.fitting(&tmpl) == 0 {
		// No node runs the template: there is nothing to canary, and
		// nothing to wait for.
		return
	}
	if inst == nil {
		c.violate(Promotion, fmt.Sprintf("%s promoted over %s with no canary of it running (no CanaryStarted, no duration, no analysis)", rs, before.ActiveReplicaSet))
		return
	}
	if at, ok := c.givenAt[rs][scenario.Validate]; ok && at > inst.startOrder {
		return
	}
	strategy := c.eds.Spec.Strategy.Canary
	var why []string
	required := canaryDuration
	if len(strategy.Steps) > 0 {
		required = stepDuration
	}
	if at, ok := c.givenAt[rs][scenario.SkipStep]; ok && at > inst.startOrder && len(strategy.Steps) > 0 && c.skippedStep[rs] == int32(len(strategy.Steps)) {
		// A person skipped the last step of this instance: that is
		// promoting it.
		return
	}
	if ran := c.now.Sub(inst.startedAt); ran < required {
		why = append(why, fmt.Sprintf("ran %s of its %s", ran, required))
	}
	for _, name := range before.Canary.Nodes {
		// A node that joined the canary (a replacement, a step's) is
		// judged for a whole duration (or step) of its own.
		if joined, ok := inst.joined[name]; ok && c.now.Sub(joined) < required {
			why = append(why, fmt.Sprintf("canary node %s ran %s of its %s", name, c.now.Sub(joined), required))
		}
	}
	if strategy.Analysis != nil && !inst.analysisPassed {
		why = append(why, "its analysis never passed")
	}
	if strategy.ValidationMode == v1alpha1.CanaryValidationManual {
		why = append(why, "manual validation, not validated since it started")
	}
	switch judged := c.judgedNodes(rs, before.Canary.Nodes); {
	case judged == 0:
		why = append(why, fmt.Sprintf("no available canary pod on a Ready canary node (canary nodes %v)", before.Canary.Nodes))
	case judged < len(before.Canary.Nodes):
		why = append(why, fmt.Sprintf("an available canary pod on a Ready node on %d of its canary nodes %v", judged, before.Canary.Nodes))
	}
	if len(why) > 0 {
		c.violate(Promotion, fmt.Sprintf("canary %s started at t=%s promoted at t=%s, not validated for this instance: %v",
			rs, inst.startedAt.Sub(c.start), c.now.Sub(c.start), why))
	}
}

// judgedNodes counts the canary nodes running an available pod of rs on a
// Ready node.
func (c *Cluster) judgedNodes(rs string, nodes []string) int {
	n := 0
	for _, name := range nodes {
		node := c.node(name)
		if node == nil || !nodeReady(node) {
			continue
		}
		for _, p := range c.pods {
			if placement.TargetNode(p) == name && replicaSetOf(p) == rs && podReady(p) {
				n++
				break
			}
		}
	}
	return n
}

// creating checks a pod the controller creates on node.
func (c *Cluster) creating(node string) {
	if n := c.node(node); n != nil && placement.InMaintenance(n) {
		c.violate(LeftAlone, fmt.Sprintf("created a pod on node %s, in maintenance (%s): %s", node, placement.Maintenance(n), c.describe()))
	}
}

// deleting checks and records a pod the controller deletes.
func (c *Cluster) deleting(pod *corev1.Pod, reason string) {
	if !agent(pod) {
		c.violate(NotOurs, fmt.Sprintf("deleted pod %s (labels %v), not an agent, as %s", pod.Name, pod.Labels, reason))
		return
	}
	node := placement.TargetNode(pod)
	c.checkBroughtBack(pod, node, reason)
	if n := c.node(node); n != nil && placement.InMaintenance(n) && reason != string(rollout.DeleteSurgeEnded) {
		c.violate(LeftAlone, fmt.Sprintf("deleted pod %s on node %s, in maintenance (%s), as %s", pod.Name, node, placement.Maintenance(n), reason))
	}
	if h := c.failedHold; h != nil && !slices.Contains(h.nodes, node) {
		c.violate(FailedHolds, fmt.Sprintf("deleted pod %s on node %s as %s after canary %s failed on %v, the DaemonSet's template unchanged: %s",
			pod.Name, node, reason, h.replicaSet, h.nodes, c.describe()))
	}
	if !podReady(pod) {
		return
	}
	for _, other := range c.pods {
		if other != pod && agent(other) && placement.TargetNode(other) == node && podReady(other) {
			return
		}
	}
	c.disrupted[node] = true
}

// checkBroughtBack checks, with a workloadRef, that the template the
// DaemonSet recreates the deleted pod at is one the rollout allows on its
// node.
func (c *Cluster) checkBroughtBack(pod *corev1.Pod, node, reason string) {
	if c.workload == nil {
		return
	}
	back := c.workload.spec()
	if active := c.sets[c.eds.Status.ActiveReplicaSet]; active != nil && equality.Semantic.DeepEqual(&active.Spec.Template, &back) {
		return
	}
	if cs := canary.Running(c.eds); cs != nil && slices.Contains(cs.Nodes, node) {
		if ers := c.sets[cs.ReplicaSet]; ers != nil && equality.Semantic.DeepEqual(&ers.Spec.Template, &back) {
			return
		}
	}
	c.violate(Unjudged, fmt.Sprintf("deleted pod %s on node %s as %s, which the DaemonSet brings back at its template %d, neither the active replica set's nor a running canary's of that node: %s",
		pod.Name, node, reason, c.workload.template, c.describe()))
}

// check checks the budgets, the agents per node and the counters.
func (c *Cluster) check() {
	c.checkCounters()
	agents := map[string]int{}
	available := map[string]bool{}
	for _, p := range c.pods {
		if !agent(p) || p.DeletionTimestamp != nil {
			continue
		}
		node := placement.TargetNode(p)
		if n := c.node(node); n == nil || !placement.Unresponsive(n, c.now, placement.DefaultUnresponsiveGrace) || c.cfg.MaxSurge == 0 {
			// An unresponsive node is left alone, and out of the surge
			// budget; with maxSurge 0 no node ever has two agents.
			agents[node]++
		}
		if podReady(p) {
			available[node] = true
		}
	}
	tmpl := c.peopleTemplate()
	fitter := c.fitter(&tmpl)
	total, zones := 0, map[string]int{}
	for node := range c.disrupted {
		n := c.node(node)
		// A node in maintenance, as an unresponsive one, is out of the
		// budget from then on: the controller creates nothing there, so
		// its agent is the maintenance's business until it ends.
		if n == nil || available[node] || placement.Unresponsive(n, c.now, placement.DefaultUnresponsiveGrace) || placement.InMaintenance(n) {
			delete(c.disrupted, node)
			continue
		}
		if fitter.Fit(n).ShouldRun {
			total++
			zones[n.Labels[zoneLabel]]++
		}
	}
	if total > c.cfg.MaxUnavailable {
		c.violate(Budget, fmt.Sprintf("%d nodes lack the available agent the controller took down, maxUnavailable %d: %v", total, c.cfg.MaxUnavailable, keys(c.disrupted)))
	}
	if c.eds.Spec.Strategy.RollingUpdate.Topology != nil {
		for zone, n := range zones {
			if n > 1 {
				c.violate(DomainBudget, fmt.Sprintf("%d nodes of %s lack the available agent the controller took down, maxUnavailablePerDomain 1", n, zone))
			}
		}
	}
	var surging []string
	for node, n := range agents {
		if n > 1 {
			part := "active node"
			if cs := canary.Running(c.eds); cs != nil && slices.Contains(cs.Nodes, node) {
				part = "canary node"
			}
			surging = append(surging, fmt.Sprintf("%s (%s): %v", node, part, c.podsOn(node)))
			if c.cfg.MaxSurge == 0 {
				c.violate(TwoAgents, fmt.Sprintf("node %s runs %d agents with maxSurge 0: %v", node, n, c.podsOn(node)))
			}
		}
	}
	if len(surging) > c.cfg.MaxSurge && c.cfg.MaxSurge > 0 {
		slices.Sort(surging)
		c.violate(TwoAgents, fmt.Sprintf("%d nodes run two agents, maxSurge %d: %s", len(surging), c.cfg.MaxSurge, strings.Join(surging, "; ")))
	}
}

// podsOn names the live pods on node, each with the part its replica set
// plays: active, canary, other (a template that is neither), or old (the
// DaemonSet's).
func (c *Cluster) podsOn(node string) []string {
	var out []string
	for _, p := range c.sortedPods() {
		if placement.TargetNode(p) != node || p.DeletionTimestamp != nil || !agent(p) {
			continue
		}
		rs, part := replicaSetOf(p), "other"
		switch cs := canary.Running(c.eds); {
		case rs == "":
			part = "old"
		case rs == c.eds.Status.ActiveReplicaSet:
			part = "active"
		case cs != nil && cs.ReplicaSet == rs:
			part = "canary"
		}
		out = append(out, p.Name+"("+part+")")
	}
	return out
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// ended says how the last template change ended, empty while it has not:
// Ready, Stalled, or waiting for a person (paused, frozen, manual
// validation, an analysis that cannot conclude, an old DaemonSet still
// there).
func (c *Cluster) ended() string {
	st := c.eds.Status
	if c.edsErr != nil {
		// The status says ReconcileFailed, retried: Progressing.
		return ""
	}
	if c.specErr != nil {
		return "Stalled: " + c.specErr.Error()
	}
	current := c.currentName()
	if cs := st.Canary; cs != nil && cs.ReplicaSet == current {
		switch {
		case cs.Failed:
			return "Stalled: canary failed"
		case cs.Paused:
			return "waiting for a person: canary paused: " + cs.Reason
		}
		if canary.WaitingForNodesPastDeadline(cs, progressDeadline, c.now) {
			// setExtendedDaemonSetStatus: a canary that found no nodes
			// to run on within the deadline stalls.
			return "Stalled: canary " + v1alpha1.ReasonProgressDeadlineExceeded + " waiting for nodes"
		}
		if p := c.progress[cs.ReplicaSet]; p.phase == phaseStalled {
			return "Stalled: canary " + p.reason
		}
		switch p := c.progress[cs.ReplicaSet]; p.reason {
		case v1alpha1.ReasonRolloutFrozen:
			return "waiting for a person: frozen"
		case v1alpha1.ReasonWaitingForOldDaemonSet:
			// A canary started during a handover keeps the DaemonSet's
			// pods on its nodes until a person deletes the DaemonSet
			// (README, Migrating from a DaemonSet).
			return "waiting for a person: canary " + p.reason
		}
		return ""
	}
	if st.Bake != nil && st.Bake.ReplicaSet == st.ActiveReplicaSet && st.Bake.Analysis != nil &&
		st.Bake.Analysis.Phase == v1alpha1.AnalysisFailed {
		return "Stalled: bake failed"
	}
	// extendedDaemonSetProgress: the gates before a domain hold nothing
	// here, the model's canaries having no webhooks.
	p := c.progress[st.ActiveReplicaSet]
	switch {
	case p.phase == phaseStalled:
		return "Stalled: " + p.reason
	case p.phase == phaseDone && st.ActiveReplicaSet == current:
		return "Ready"
	case p.reason == v1alpha1.ReasonRolloutFrozen, p.reason == v1alpha1.ReasonRollingUpdatePaused, p.reason == v1alpha1.ReasonWaitingForOldDaemonSet:
		return "waiting for a person: " + p.reason
	}
	return ""
}

// checkFailed checks that the canary instance a person just failed is no
// longer running. A pass that could not tell the current replica set (the
// DaemonSet's revision not recorded yet) decided nothing, the canary's
// steering among it, and nothing was created or deleted meanwhile (no
// replica set runs the DaemonSet's new template): the first pass that
// decides must have acted on it, unless a person wrote another value in
// its place before that pass read it: steering values are levels, and a
// value replaced unread was never given.
func (c *Cluster) checkFailed(f failGiven) {
	if c.edsErr != nil {
		c.failToCheck = &f
		return
	}
	if c.running() == f.inst {
		c.violate(FailIgnored, fmt.Sprintf("canary %s still runs after a person failed it (%s %q): %s", f.inst.replicaSet, f.via, f.value, c.describe()))
	}
}

// failValue is the fail value given through via: the annotation, or the
// spec twin.
func (c *Cluster) failValue(via scenario.Via) string {
	if via == scenario.ViaSpec {
		return c.twins.fail
	}
	return c.annotations[v1alpha1.CanaryFailedAnnotation]
}

// daemonSetTemplateChanged: a person changed the template of the
// DaemonSet a workloadRef names, which lifts a failed canary's hold.
func (p *promises) daemonSetTemplateChanged() { p.failedHold = nil }

// retryGiven: a person asked for a retry, which may start the failed
// canary again or, without a canary, roll its template out.
func (p *promises) retryGiven() { p.failedHold = nil }
