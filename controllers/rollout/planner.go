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
	nodes := slices.Clone(in.Nodes)
	slices.SortFunc(nodes, func(a, b Node) int { return strings.Compare(a.Name, b.Name) })
	var f fragment
	o := newObserver(&in, &f)
	sum := summary{pool: &slicePool{byDomain: map[string]*lists{}}, byDomain: map[string]*domain{}}
	var plan Plan
	for i := range nodes {
		o.observe(&nodes[i], in.Pods[nodes[i].Name])
		sum.add(nodes[i].Name, &f, &plan)
	}
	return decide(in, sum.observed(), plan)
}

// summary sums the fragments of Compute, taken in node order.
type summary struct {
	tally     tally
	requeueAt time.Time
	pool      *slicePool
	byDomain  map[string]*domain
	domains   []*domain
}

// add counts the fragment f of node name, and appends its own part to plan.
func (s *summary) add(name string, f *fragment, plan *Plan) {
	s.tally.add(&f.tally, 1)
	plan.Delete = append(plan.Delete, f.deletes...)
	plan.Reopen = append(plan.Reopen, f.reopen...)
	if f.failed {
		plan.FailedNodes = append(plan.FailedNodes, name)
	}
	if !f.requeueAt.IsZero() && (s.requeueAt.IsZero() || f.requeueAt.Before(s.requeueAt)) {
		s.requeueAt = f.requeueAt
	}
	s.pool.add(name, f)
	if !f.inDomain {
		return
	}
	d := s.byDomain[f.domain]
	if d == nil {
		d = &domain{name: f.domain}
		s.byDomain[f.domain] = d
		s.domains = append(s.domains, d)
	}
	d.add(&f.dom, 1)
	if f.dom.availableSince.After(d.availableSince) {
		d.availableSince = f.dom.availableSince
	}
}

func (s *summary) observed() observed {
	return observed{tally: s.tally, requeueAt: s.requeueAt, pool: s.pool, domains: s.domains}
}

// observed is the sum of the fragments of a replica set's nodes.
type observed struct {
	tally tally
	// requeueAt is the earliest of the fragments', zero when none asks.
	requeueAt time.Time
	pool      pool
	// domains are the domains with a desired node, in any order, with a
	// topology; their tallies are the sums over their nodes.
	domains []*domain
}

// decide is the global phase: it spends the budgets over what the nodes
// observed, into plan, which holds the nodes' own parts already.
func decide(in Input, obs observed, plan Plan) Plan {
	p := planner{in: in, plan: plan, pool: obs.pool, inFlight: obs.tally.inFlight}
	p.plan.Counts = obs.tally.counts()
	if !obs.requeueAt.IsZero() {
		p.requeueAfter(obs.requeueAt.Sub(in.Now))
	}
	allowance := max(0, in.Params.MaxPodSchedulerFailure-in.Elsewhere.Excused)
	p.plan.Counts.Excused = min(obs.tally.schedulerFailures, allowance)
	p.plan.Counts.Unavailable = max(0, obs.tally.unavailable-p.plan.Counts.Excused)
	if t := in.Params.Topology; t != nil {
		p.domains = newDomains(obs.domains)
		if bake := p.domains.settle(t, allowance, in.Elsewhere.Domains, in.Now); bake > 0 {
			p.requeueAfter(bake)
		}
		p.plan.Counts.Domains = p.domains.counts(t, in.Now)
	}
	if in.Params.Frozen {
		p.plan.Create, p.plan.Delete, p.plan.UpdateInPlace, p.plan.FailedNodes = nil, nil, nil, nil
		p.plan.Reopen = append(p.plan.Reopen, podNames(p.everyGateClosed())...)
		return p.plan
	}
	p.planCreations()
	p.planReopen()
	return p.plan
}

type planner struct {
	in   Input
	plan Plan
	pool pool
	// inFlight counts new pods created but not yet ready.
	inFlight int
	// domains are the domains of the topology, nil without one.
	domains *domains
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
// within the creation budget of slow start. Each list is read only as far
// as the budgets let it be taken.
func (p *planner) planCreations() {
	budget := p.creationBudget()
	take := func(n int) int {
		n = max(0, min(n, budget))
		budget -= n
		return n
	}
	empty := p.pool.emptyNodes(budget, nil)
	p.plan.Create = append(p.plan.Create, empty[:take(len(empty))]...)
	if p.in.Params.Paused {
		return
	}
	// An unavailable old pod is replaced at no cost to availability: it is
	// updated in place, or deleted and its node becomes empty. Its new pod
	// then comes in a later step, so that no node ever holds two pods
	// outside a surge.
	oldUnavailable := p.inTurn(kindOldUnavailable, anyClass, budget)
	for _, pod := range oldUnavailable[:take(len(oldUnavailable))] {
		p.replace(pod)
	}
	allowed := p.in.Params.MaxUnavailable - p.plan.Counts.Unavailable - p.in.Elsewhere.Unavailable
	if p.in.Params.MaxSurge == 0 {
		chosen := p.withinBudgets(anyClass, min(allowed, budget))
		for _, pod := range chosen[:take(len(chosen))] {
			p.replace(pod)
		}
		return
	}
	// A surge needs a second pod, which an in-place update does without:
	// those spend MaxUnavailable, and only when there is none are they
	// surged with the others.
	surgeClasses := anyClass
	if p.in.Params.MaxUnavailable > 0 {
		surgeClasses = notInPlace
		inPlace := p.withinBudgets(inPlaceOnly, min(allowed, budget))
		for _, pod := range inPlace[:take(len(inPlace))] {
			p.replace(pod)
		}
	}
	surges := p.inTurn(kindSurgeable, surgeClasses, min(p.in.Params.MaxSurge-p.plan.Counts.Surging-p.in.Elsewhere.Surging, budget))
	for _, pod := range surges[:take(len(surges))] {
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
		p.plan.Reopen = append(p.plan.Reopen, podNames(p.everyGateClosed())...)
		return
	}
	if p.domains == nil {
		return
	}
	// Returning pods go on whatever the turn.
	var waiting []source
	for _, d := range p.domains.ordered {
		if !d.open {
			waiting = sources(waiting, d.name, notReturning)
		}
	}
	p.plan.Reopen = append(p.plan.Reopen, podNames(firstOf(p.pool, kindGateClosed, all, waiting))...)
}

// everyGateClosed is every old pod whose gate was closed for an in-place
// update, in node order.
func (p *planner) everyGateClosed() []Pod {
	if p.domains == nil {
		return firstOf(p.pool, kindGateClosed, all, sources(nil, "", anyClass))
	}
	var srcs []source
	for _, d := range p.domains.ordered {
		srcs = sources(srcs, d.name, anyClass)
	}
	return firstOf(p.pool, kindGateClosed, all, srcs)
}

func podNames(pods []Pod) []string {
	names := make([]string, 0, len(pods))
	for _, pod := range pods {
		names = append(names, pod.Name)
	}
	return names
}

// withinBudgets returns the old available pods of classes cs to replace
// now at a cost to availability: at most allowed of them, and, with a
// topology, only in domains whose turn it is, within each domain's budget.
func (p *planner) withinBudgets(cs []class, allowed int) []Pod {
	if p.domains == nil {
		return firstOf(p.pool, kindOldAvailable, allowed, sources(nil, "", cs))
	}
	return p.domains.pick(p.pool, cs, allowed)
}

// inTurn returns the first n old pods of kind k and classes cs whose
// replacement costs no availability but must wait its turn: with a
// topology, those of the domains whose turn it is, and returning ones.
func (p *planner) inTurn(k kind, cs []class, n int) []Pod {
	if p.domains == nil {
		return firstOf(p.pool, k, n, sources(nil, "", cs))
	}
	var srcs []source
	for _, d := range p.domains.ordered {
		srcs = d.sources(srcs, cs)
	}
	return firstOf(p.pool, k, n, srcs)
}

// replace takes an old pod off its node for the rolling update: in place
// when its template allows, else by deleting it.
func (p *planner) replace(pod Pod) {
	if pod.InPlace {
		p.plan.UpdateInPlace = append(p.plan.UpdateInPlace, InPlaceUpdate{Pod: pod.Name, Node: pod.Node})
		return
	}
	p.plan.Delete = append(p.plan.Delete, Deletion{Pod: pod.Name, Node: pod.Node, Reason: DeleteReplaced})
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
