package rollout

import (
	"slices"
	"strings"
	"time"
)

// Compute plans one step of the rollout. The plan never deletes, nor
// updates in place, an available pod of a desired node when that would
// leave more than MaxUnavailable desired nodes without one, never puts a
// second pod on a node except to surge (at most MaxSurge nodes at once), and
// never creates a pod on a node that still has a pod terminating. Both
// budgets are shared with the other replica set of the ExtendedDaemonSet
// (Input.Elsewhere). With a topology, it also never takes a domain past its
// own budget, and replaces old pods only in the domains whose turn it is:
// all of them, or, Sequential, the first that is not done and baked, once
// its gates passed.
func Compute(in Input) Plan {
	p := planner{in: in}
	if in.Params.Topology != nil {
		p.domains = newDomains(len(in.Nodes))
	}
	nodes := slices.Clone(in.Nodes)
	slices.SortFunc(nodes, func(a, b Node) int { return strings.Compare(a.Name, b.Name) })
	for i := range nodes {
		p.observeNode(&nodes[i])
	}
	allowance := max(0, in.Params.MaxPodSchedulerFailure-in.Elsewhere.Excused)
	p.plan.Counts.Excused = min(p.schedulerFailures, allowance)
	p.plan.Counts.Unavailable = max(0, p.unavailable-p.plan.Counts.Excused)
	if t := in.Params.Topology; t != nil {
		if bake := p.domains.settle(t, allowance, in.Elsewhere.Domains, in.Now); bake > 0 {
			p.requeueAfter(bake)
		}
		p.plan.Counts.Domains = p.domains.counts(t, in.Now)
	}
	if in.Params.Frozen {
		p.plan.Create, p.plan.Delete, p.plan.UpdateInPlace, p.plan.FailedNodes = nil, nil, nil, nil
		p.plan.Reopen = append(p.plan.Reopen, podNames(p.gateClosed)...)
		return p.plan
	}
	p.planCreations()
	p.planReopen()
	return p.plan
}

type planner struct {
	in   Input
	plan Plan

	// unavailable counts desired nodes without an available pod, before
	// the scheduler-failure allowance.
	unavailable int
	// schedulerFailures counts the unavailable desired nodes whose new pod
	// the scheduler could not place: what the allowance may excuse.
	schedulerFailures int
	// inFlight counts new pods created but not yet ready.
	inFlight int
	// empty are desired nodes with no pod at all.
	empty []string
	// oldAvailable and oldUnavailable are desired nodes whose only pod is
	// old: the rolling update's candidates.
	oldAvailable, oldUnavailable []Pod
	// surgeable are the nodes of oldAvailable with no pod terminating,
	// where a new pod may be created beside the old one.
	surgeable []Pod
	// gateClosed are the desired nodes' old pods whose gate was closed for
	// an in-place update.
	gateClosed []Pod
	// domains are the domains of the topology, nil without one; cur is
	// the domain of the desired node being observed.
	domains *domains
	cur     *domain
}

func (p *planner) observeNode(node *Node) {
	if node.Unresponsive {
		switch {
		case node.Maintenance && node.ShouldContinueRunning:
			p.plan.Counts.InMaintenance++
		case node.ShouldRun && !node.Maintenance:
			p.plan.Counts.IgnoredUnresponsive++
		}
		return
	}
	if node.Maintenance {
		p.leaveInMaintenance(node)
		return
	}
	p.cur = nil
	if p.domains != nil && node.ShouldRun && node.ShouldContinueRunning {
		p.cur = p.domains.enter(node)
	}
	var newPods, oldPods []Pod
	terminating, live := false, 0
	for _, pod := range p.in.Pods[node.Name] {
		if pod.Terminating {
			terminating = true
			continue
		}
		live++
		p.count(pod)
		switch {
		case !node.ShouldContinueRunning:
			p.remove(pod, DeleteMisplaced)
			p.plan.Counts.Misplaced++
		case pod.New:
			newPods = append(newPods, pod)
		default:
			oldPods = append(oldPods, pod)
		}
	}
	// A node running two pods surges, whatever replica sets they belong
	// to: duplicates, a failed pod beside a live one, or two pods of other
	// replica sets (a canary that took a node mid-surge, a template
	// abandoned mid-surge). Unless counted as a surge below, its extra pods
	// are deleted with this plan: like a surge ending, the node holds its
	// place in the surge budget the other replica set sees until they are
	// gone, or that one would surge on a node of its own, past maxSurge.
	if live > 1 {
		surges := p.plan.Counts.Surging + p.plan.Counts.SurgeEnding
		defer func() {
			if p.plan.Counts.Surging+p.plan.Counts.SurgeEnding == surges {
				p.plan.Counts.SurgeEnding++
			}
		}()
	}
	if !node.ShouldContinueRunning {
		return
	}
	if node.ShouldRun {
		p.plan.Counts.Desired++
	}
	// Duplicates go first, failed ones included: a failed pod is kept only
	// when it is the only pod of its kind on the node.
	newPod := p.keepBest(newPods)
	oldPod := p.keepBest(oldPods)
	if p.cur != nil {
		p.cur.desired++
		if oldPod != nil {
			p.cur.old++
		}
	}
	if p.handleFailed(node, newPod, oldPod) {
		return
	}
	if !node.ShouldRun {
		// A NoSchedule misfit: running pods stay, nothing is placed or
		// replaced. A surge the taint caught still ends, and holds its place
		// in the surge budget until it does.
		if oldPod != nil && oldPod.GateClosed {
			p.plan.Reopen = append(p.plan.Reopen, oldPod.Name)
		}
		if newPod != nil && oldPod != nil {
			switch {
			case p.available(newPod):
				p.remove(*oldPod, DeleteSurgeEnded)
				p.plan.Counts.SurgeEnding++
			case !p.available(oldPod):
				// Ends with this plan too, counted by the deferred
				// SurgeEnding above.
				p.remove(*oldPod, DeleteReplaced)
			default:
				p.plan.Counts.Surging++
			}
		}
		return
	}
	// A duplicate deleted now terminates: no new pod beside what is left
	// until it is gone.
	p.placeOnDesiredNode(node, newPod, oldPod, terminating || len(newPods) > 1 || len(oldPods) > 1)
}

// leaveInMaintenance leaves a node in maintenance with the agent it has:
// nothing is created, replaced or updated there, and nothing counts
// against the budgets. A surge the maintenance caught still ends, so that
// the node holds one agent: the new pod when it is available (the surge
// succeeded), else the old one it ran before; the others are deleted, and
// the node holds its place in the surge budget until they are gone. An
// old pod whose gate was closed for an in-place update is reopened: the
// update does not go on there.
func (p *planner) leaveInMaintenance(node *Node) {
	if node.ShouldContinueRunning {
		p.plan.Counts.InMaintenance++
	}
	var live []Pod
	for _, pod := range p.in.Pods[node.Name] {
		if !pod.Terminating {
			live = append(live, pod)
		}
	}
	if len(live) > 1 {
		slices.SortFunc(live, p.compareForKeeping)
		keep := slices.IndexFunc(live, func(pod Pod) bool { return pod.New && p.available(&pod) })
		if keep < 0 {
			keep = max(0, slices.IndexFunc(live, func(pod Pod) bool { return !pod.New }))
		}
		for i, pod := range live {
			if i != keep {
				p.remove(pod, DeleteSurgeEnded)
			}
		}
		p.plan.Counts.SurgeEnding++
		live = live[keep : keep+1]
	}
	if len(live) == 1 && !live[0].New && live[0].GateClosed {
		p.plan.Reopen = append(p.plan.Reopen, live[0].Name)
	}
}

// placeOnDesiredNode decides for a node that should run a pod.
func (p *planner) placeOnDesiredNode(node *Node, newPod, oldPod *Pod, terminating bool) {
	switch {
	case newPod == nil && oldPod == nil:
		p.markUnavailable(nil)
		if !terminating {
			p.empty = append(p.empty, node.Name)
		}
	case oldPod == nil:
		if p.available(newPod) {
			p.upToDate(newPod)
		} else {
			p.markUnavailable(newPod)
		}
	case newPod != nil:
		if p.available(newPod) {
			p.remove(*oldPod, DeleteSurgeEnded)
			p.plan.Counts.SurgeEnding++
			p.upToDate(newPod)
			if p.cur != nil {
				p.cur.surgeEnding++
			}
			return
		}
		if !p.available(oldPod) {
			p.markUnavailable(newPod)
			// Neither pod serves: deleting the old one costs nothing, and
			// keeping it would keep two agents on a node going down
			// (both marked not ready) past the unresponsive grace, which
			// leaves the node alone and out of the surge budget while
			// another node surges: back, it would surge too, past
			// maxSurge. The surge ends with this plan (SurgeEnding, from
			// observeNode).
			p.remove(*oldPod, DeleteReplaced)
			return
		}
		p.plan.Counts.Surging++
	case p.available(oldPod):
		p.oldAvailable = append(p.oldAvailable, *oldPod)
		if !terminating {
			p.surgeable = append(p.surgeable, *oldPod)
		}
	case oldPod.Draining:
		// Its in-place update is under way; it goes on once drained.
		p.markUnavailable(nil)
	default:
		p.markUnavailable(nil)
		p.oldUnavailable = append(p.oldUnavailable, *oldPod)
	}
	if oldPod != nil && oldPod.GateClosed {
		p.gateClosed = append(p.gateClosed, *oldPod)
	}
}

// handleFailed deletes the failed pod kept on a node (newPod or oldPod)
// once its backoff has ended. It reports whether the node waits: a failed
// pod is still in backoff or is being deleted now, so nothing else happens
// there in this step.
func (p *planner) handleFailed(node *Node, newPod, oldPod *Pod) bool {
	var failed []Pod
	var other *Pod
	for _, pod := range []*Pod{newPod, oldPod} {
		switch {
		case pod == nil:
		case pod.Failed:
			failed = append(failed, *pod)
		default:
			other = pod
		}
	}
	if len(failed) == 0 {
		return false
	}
	if node.ShouldRun && (other == nil || !p.available(other)) {
		if other != nil && other.New {
			p.markUnavailable(other)
		} else {
			p.markUnavailable(nil)
		}
	}
	if until, ok := p.in.BackoffUntil[node.Name]; ok && p.in.Now.Before(until) {
		p.requeueAfter(until.Sub(p.in.Now))
		if newPod != nil && oldPod != nil {
			// The failed pod holds its place beside the other kind until
			// the backoff ends: a surge, for the surge budget.
			p.plan.Counts.Surging++
		}
		return true
	}
	for _, pod := range failed {
		p.remove(pod, DeleteFailed)
	}
	p.plan.FailedNodes = append(p.plan.FailedNodes, node.Name)
	return true
}

// upToDate counts a desired node whose pod is an available new pod.
func (p *planner) upToDate(newPod *Pod) {
	p.plan.Counts.UpToDate++
	if d := p.cur; d != nil {
		d.upToDate++
		if at := newPod.ReadySince.Add(p.in.Params.MinReady); at.After(d.availableSince) {
			d.availableSince = at
		}
	}
}

// markUnavailable counts a desired node without an available pod; newPod
// is the node's new pod, if any.
func (p *planner) markUnavailable(newPod *Pod) {
	p.unavailable++
	schedulerFailure := newPod != nil && newPod.Unschedulable
	if schedulerFailure {
		p.schedulerFailures++
	}
	if d := p.cur; d != nil {
		d.unavailable++
		if schedulerFailure {
			d.schedulerFailures++
		}
	}
}

// count adds a live pod to the counters.
func (p *planner) count(pod Pod) {
	c := &p.plan.Counts
	if !pod.New {
		if !pod.Failed {
			c.Old++
		}
		return
	}
	c.Current++
	if pod.Unschedulable {
		c.Unschedulable++
	}
	if pod.Updating && !pod.Failed {
		c.Updating++
	}
	if pod.Ready() {
		c.Ready++
		if p.available(&pod) {
			c.Available++
		}
	} else if !pod.Failed {
		p.inFlight++
	}
}

// available reports whether pod is available now, and when it is ready but
// not yet available, asks to look again when it will be.
func (p *planner) available(pod *Pod) bool {
	if pod.Available(p.in.Params.MinReady, p.in.Now) {
		return true
	}
	if pod.Ready() {
		p.requeueAfter(pod.ReadySince.Add(p.in.Params.MinReady).Sub(p.in.Now))
	}
	return false
}

// keepBest returns the pod to keep among pods of one kind on a node and
// deletes the others as duplicates.
func (p *planner) keepBest(pods []Pod) *Pod {
	if len(pods) == 0 {
		return nil
	}
	slices.SortFunc(pods, p.compareForKeeping)
	for _, dup := range pods[1:] {
		p.remove(dup, DeleteDuplicate)
	}
	return &pods[0]
}

// compareForKeeping orders the pod most worth keeping first: available,
// then ready, then scheduled, then unschedulable, then failed; then older,
// then by name for stability.
func (p *planner) compareForKeeping(a, b Pod) int {
	score := func(pod *Pod) int {
		switch {
		case pod.Available(p.in.Params.MinReady, p.in.Now):
			return 0
		case pod.Ready():
			return 1
		case pod.Failed:
			return 4
		case !pod.Unschedulable:
			return 2
		default:
			return 3
		}
	}
	if d := score(&a) - score(&b); d != 0 {
		return d
	}
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

func (p *planner) remove(pod Pod, reason DeleteReason) {
	p.plan.Delete = append(p.plan.Delete, Deletion{Pod: pod.Name, Node: pod.Node, Reason: reason})
}

func (p *planner) requeueAfter(d time.Duration) {
	if d <= 0 {
		d = time.Second
	}
	if p.plan.RequeueAfter == 0 || d < p.plan.RequeueAfter {
		p.plan.RequeueAfter = d
	}
}

// planCreations places pods on empty nodes first, then replaces old pods,
// within the creation budget of slow start.
func (p *planner) planCreations() {
	budget := p.creationBudget()
	take := func(n int) int {
		n = max(0, min(n, budget))
		budget -= n
		return n
	}
	n := take(len(p.empty))
	p.plan.Create = append(p.plan.Create, p.empty[:n]...)
	if p.in.Params.Paused {
		return
	}
	// An unavailable old pod is replaced at no cost to availability: it is
	// updated in place, or deleted and its node becomes empty. Its new pod
	// then comes in a later step, so that no node ever holds two pods
	// outside a surge.
	oldUnavailable := p.inTurn(p.oldUnavailable)
	for _, pod := range oldUnavailable[:take(len(oldUnavailable))] {
		p.replace(pod)
	}
	allowed := p.in.Params.MaxUnavailable - p.plan.Counts.Unavailable - p.in.Elsewhere.Unavailable
	if p.in.Params.MaxSurge == 0 {
		chosen := p.withinBudgets(p.oldAvailable, allowed)
		for _, pod := range chosen[:take(len(chosen))] {
			p.replace(pod)
		}
		return
	}
	// A surge needs a second pod, which an in-place update does without:
	// those spend MaxUnavailable, and only when there is none are they
	// surged with the others.
	var inPlace []Pod
	surgeable := p.surgeable
	if p.in.Params.MaxUnavailable > 0 {
		inPlace = slices.DeleteFunc(slices.Clone(p.oldAvailable), func(pod Pod) bool { return !pod.InPlace })
		surgeable = slices.DeleteFunc(slices.Clone(p.surgeable), func(pod Pod) bool { return pod.InPlace })
	}
	inPlace = p.withinBudgets(inPlace, allowed)
	for _, pod := range inPlace[:take(len(inPlace))] {
		p.replace(pod)
	}
	surgeable = p.inTurn(surgeable)
	n = take(min(p.in.Params.MaxSurge-p.plan.Counts.Surging-p.in.Elsewhere.Surging, len(surgeable)))
	for _, pod := range surgeable[:n] {
		p.plan.Create = append(p.plan.Create, pod.Node)
	}
}

// planReopen reopens the gates closed for in-place updates that do not go
// on: paused, or not their domain's turn. Closing a gate and patching the
// images are two steps (the kubelet must take the pod out of service in
// between), and what allowed the first may no longer hold at the second;
// the pod would then stay out of service, serving nothing, for as long as
// the pause or the other domains last. Reopened, it counts as unavailable
// until it is ready again, as it did while closed, so no budget is spent
// twice. A pod only waiting for its turn within slow start keeps its gate
// closed: it goes on as soon as a pod in flight is ready.
func (p *planner) planReopen() {
	if p.in.Params.Paused {
		p.plan.Reopen = append(p.plan.Reopen, podNames(p.gateClosed)...)
		return
	}
	goesOn := map[string]bool{}
	for _, pod := range p.inTurn(p.gateClosed) {
		goesOn[pod.Name] = true
	}
	for _, pod := range p.gateClosed {
		if !goesOn[pod.Name] {
			p.plan.Reopen = append(p.plan.Reopen, pod.Name)
		}
	}
}

func podNames(pods []Pod) []string {
	names := make([]string, 0, len(pods))
	for _, pod := range pods {
		names = append(names, pod.Name)
	}
	return names
}

// withinBudgets returns the old pods to replace now at a cost to
// availability: at most allowed of them, and, with a topology, only in
// domains whose turn it is, within each domain's budget.
func (p *planner) withinBudgets(pods []Pod, allowed int) []Pod {
	if p.domains == nil {
		return pods[:max(0, min(allowed, len(pods)))]
	}
	return p.domains.pick(pods, allowed)
}

// inTurn keeps, with a topology, the old pods of the domains whose turn it
// is; their replacement costs no availability but must wait its turn.
func (p *planner) inTurn(pods []Pod) []Pod {
	if p.domains == nil {
		return pods
	}
	return p.domains.inOpen(pods)
}

// replace takes an old pod off its node for the rolling update: in place
// when its template allows, else by deleting it.
func (p *planner) replace(pod Pod) {
	if pod.InPlace {
		p.plan.UpdateInPlace = append(p.plan.UpdateInPlace, InPlaceUpdate{Pod: pod.Name, Node: pod.Node})
		return
	}
	p.remove(pod, DeleteReplaced)
}

// creationBudget is how many pods may be created or replaced now: the
// slow-start cap minus the pods still being created. With no interval the
// cap is MaxParallelPodCreation (the caller creates in doubling batches); in
// additive mode it grows by SlowStartIncrease every interval.
func (p *planner) creationBudget() int {
	params := p.in.Params
	limit := params.MaxParallelPodCreation
	if limit <= 0 {
		limit = 1
	}
	if params.SlowStartInterval > 0 {
		elapsed := max(0, p.in.Now.Sub(params.StartedAt))
		intervals := int(elapsed/params.SlowStartInterval) + 1
		if grown := intervals * max(1, params.SlowStartIncrease); grown < limit {
			limit = grown
			next := params.StartedAt.Add(time.Duration(intervals) * params.SlowStartInterval)
			p.requeueAfter(next.Sub(p.in.Now))
		}
	}
	return max(0, limit-p.inFlight)
}
