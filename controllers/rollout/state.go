package rollout

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
)

// State is a replica set's planner input kept from one plan to the next:
// the nodes it is responsible for and their pods, set node by node as watch
// events tell of changes. Plan decides as Compute does over what was set,
// at a cost that does not grow with the cluster: it keeps each node's
// fragment (what the node adds to the plan) and the running sums of the
// fragments, and recomputes a fragment only when its node was set, its
// backoff changed, or the time it waited for came; the global phase then
// reads the candidate lists, kept ordered, only as far as the budgets let
// it take.
//
// A State is not safe for concurrent use.
type State struct {
	entries map[string]*entry
	// dirty are the nodes set since the last plan, each at most once.
	dirty []string
	sums  *sums
	// counted says the fragments are computed; minReady, topology, now and
	// backoff are what they were computed with. A change of the first two
	// recomputes them all, as does time going back.
	counted  bool
	minReady time.Duration
	topology bool
	now      time.Time
	backoff  map[string]time.Time
	// scratch is where fragments are observed before being kept.
	scratch fragment
}

// entry is one node as the State knows it.
type entry struct {
	node Node
	pods []Pod
	// frag is the node's fragment, counted in the sums when counted is
	// set; expires is when time alone changes it, zero when no time does.
	frag    fragment
	expires time.Time
	counted bool
	// dirty: set since its fragment was computed.
	dirty bool
}

// NewState returns an empty State.
func NewState() *State {
	return &State{entries: map[string]*entry{}, sums: newSums()}
}

// SetNode records a node and the pods on it, replacing what was recorded
// for that node. The State keeps pods; the caller must not change it after.
func (s *State) SetNode(node Node, pods []Pod) {
	e := s.entries[node.Name]
	if e == nil {
		e = &entry{}
		s.entries[node.Name] = e
	}
	e.node = node
	e.pods = nil
	if len(pods) > 0 {
		e.pods = pods
	}
	s.markDirty(node.Name)
}

// DeleteNode forgets a node and its pods.
func (s *State) DeleteNode(name string) {
	e := s.entries[name]
	if e == nil {
		return
	}
	if e.counted {
		s.sums.apply(name, e, -1)
	}
	delete(s.entries, name)
}

// Len is the number of nodes recorded.
func (s *State) Len() int { return len(s.entries) }

// Input returns what was recorded as a planner input, nodes sorted by
// name, for a full Compute that checks the State.
func (s *State) Input() Input {
	in := Input{Nodes: make([]Node, 0, len(s.entries)), Pods: map[string][]Pod{}}
	for name, e := range s.entries {
		in.Nodes = append(in.Nodes, e.node)
		if len(e.pods) > 0 {
			in.Pods[name] = e.pods
		}
	}
	slices.SortFunc(in.Nodes, func(a, b Node) int { return strings.Compare(a.Name, b.Name) })
	return in
}

// Plan plans as Compute(in) would with in.Nodes and in.Pods replaced by
// what the State recorded; in's other fields (Params, Now, BackoffUntil,
// Elsewhere) are taken as given.
func (s *State) Plan(in Input) Plan {
	s.refresh(&in)
	var plan Plan
	for name := range ascend(s.sums.acting) {
		f := &s.entries[name].frag
		plan.Delete = append(plan.Delete, f.deletes...)
		plan.Reopen = append(plan.Reopen, f.reopen...)
		if f.failed {
			plan.FailedNodes = append(plan.FailedNodes, name)
		}
	}
	return decide(in, s.sums.observed(), plan)
}

// Check plans with the State and with a full Compute over what it
// recorded, and says how the two plans differ: the periodic proof that
// the incremental sums are right. Nil when they agree; when they do not,
// the State also drops its sums, so that its next plan is computed afresh.
func (s *State) Check(in Input) error {
	got := s.Plan(in)
	full := s.Input()
	in.Nodes, in.Pods = full.Nodes, full.Pods
	if diff := DiffPlans(Compute(in), got); diff != "" {
		s.counted = false
		return fmt.Errorf("the incremental plan differs from a full one (-full +incremental):\n%s", diff)
	}
	return nil
}

// refresh brings the fragments up to date for in.
func (s *State) refresh(in *Input) {
	if !s.counted || in.Params.MinReady != s.minReady || (in.Params.Topology != nil) != s.topology || in.Now.Before(s.now) {
		s.recountAll(in)
		return
	}
	s.markBackoffChanges(in.BackoffUntil)
	for t := range ascend(s.sums.expiry) {
		if in.Now.Before(t.at) {
			break
		}
		s.markDirty(t.node)
	}
	s.now = in.Now
	o := newObserver(in, &s.scratch)
	for _, name := range s.dirty {
		if e := s.entries[name]; e != nil && e.dirty {
			s.recount(name, e, &o)
		}
	}
	s.dirty = s.dirty[:0]
}

// recountAll computes every fragment afresh.
func (s *State) recountAll(in *Input) {
	s.sums = newSums()
	s.counted, s.minReady, s.topology, s.now = true, in.Params.MinReady, in.Params.Topology != nil, in.Now
	s.backoff = maps.Clone(in.BackoffUntil)
	o := newObserver(in, &s.scratch)
	for name, e := range s.entries {
		e.counted = false
		s.recount(name, e, &o)
	}
	s.dirty = s.dirty[:0]
}

// markBackoffChanges marks the nodes whose backoff changed since the last
// plan: the map holds only the nodes whose pod failed, so reading it whole
// costs little.
func (s *State) markBackoffChanges(backoff map[string]time.Time) {
	changed := false
	for name, until := range backoff {
		if was, ok := s.backoff[name]; !ok || !was.Equal(until) {
			s.markDirty(name)
			changed = true
		}
	}
	for name := range s.backoff {
		if _, ok := backoff[name]; !ok {
			s.markDirty(name)
			changed = true
		}
	}
	if changed {
		s.backoff = maps.Clone(backoff)
	}
}

func (s *State) markDirty(name string) {
	if e := s.entries[name]; e != nil && !e.dirty {
		e.dirty = true
		s.dirty = append(s.dirty, name)
	}
}

// recount replaces the fragment of node name in the sums by one observed
// now.
func (s *State) recount(name string, e *entry, o *observer) {
	if e.counted {
		s.sums.apply(name, e, -1)
	}
	o.observe(&e.node, e.pods)
	e.frag = *o.f
	e.frag.deletes = ownCopy(o.f.deletes)
	e.frag.reopen = ownCopy(o.f.reopen)
	e.expires = nextChange(e.pods, s.backoff[name], s.minReady, s.now)
	s.sums.apply(name, e, 1)
	e.counted, e.dirty = true, false
}

// ownCopy copies a list out of the scratch fragment, nil when empty.
func ownCopy[T any](list []T) []T {
	if len(list) == 0 {
		return nil
	}
	return slices.Clone(list)
}

// DiffPlans describes how plan b differs from plan a, one line per
// differing field, empty when they are equal. Nil and empty lists are
// equal.
func DiffPlans(a, b Plan) string {
	var lines []string
	field := func(name string, equal bool, x, y any) {
		if !equal {
			lines = append(lines, fmt.Sprintf("%s:\n  - %+v\n  + %+v", name, x, y))
		}
	}
	field("Create", slices.Equal(a.Create, b.Create), a.Create, b.Create)
	field("Delete", slices.Equal(a.Delete, b.Delete), a.Delete, b.Delete)
	field("UpdateInPlace", slices.Equal(a.UpdateInPlace, b.UpdateInPlace), a.UpdateInPlace, b.UpdateInPlace)
	field("Reopen", slices.Equal(a.Reopen, b.Reopen), a.Reopen, b.Reopen)
	field("FailedNodes", slices.Equal(a.FailedNodes, b.FailedNodes), a.FailedNodes, b.FailedNodes)
	field("RequeueAfter", a.RequeueAfter == b.RequeueAfter, a.RequeueAfter, b.RequeueAfter)
	ca, cb := a.Counts, b.Counts
	ca.Domains, cb.Domains = nil, nil
	field("Counts", reflect.DeepEqual(ca, cb), ca, cb)
	field("Counts.Domains", slices.EqualFunc(a.Counts.Domains, b.Counts.Domains, sameDomainCounts), a.Counts.Domains, b.Counts.Domains)
	return strings.Join(lines, "\n")
}

func sameDomainCounts(a, b DomainCounts) bool {
	since := a.BakingSince.Equal(b.BakingSince)
	a.BakingSince, b.BakingSince = time.Time{}, time.Time{}
	return since && a == b
}
