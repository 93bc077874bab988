package rollout

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// stream is a replica set's nodes and pods changing event by event, as
// watch events tell a State of them, with the rest of the planner input
// (params, time, backoffs, the other replica set's spending) changing
// alongside.
type stream struct {
	r     *rand.Rand
	names []string
	nodes map[string]Node
	pods  map[string][]Pod
	in    Input
	state *State
	podID int
	// calm is the percentage of events that roll a node out, leaving it
	// one new pod: calm streams have domains done and baking.
	calm int
	// events are what the current step did, for a failure report.
	events []string
}

var streamDomains = []string{"zone-a", "zone-b", "zone-c", NoDomain, ""}

// newStream starts a stream over up to size node names, empty at now.
func newStream(r *rand.Rand, size int) *stream {
	s := &stream{r: r, nodes: map[string]Node{}, pods: map[string][]Pod{}, state: NewState()}
	for i := range size {
		s.names = append(s.names, fmt.Sprintf("node-%03d", i))
	}
	s.in = Input{Now: now, BackoffUntil: map[string]time.Time{}}
	s.in.Params = s.genParams()
	s.calm = 5
	if r.IntN(3) == 0 {
		s.calm = 40
	}
	// Half the nodes are there from the start, most with a pod or two.
	for _, name := range s.names {
		if r.IntN(2) == 0 {
			continue
		}
		s.nodes[name] = s.genNode(name)
		var pods []Pod
		for range r.IntN(3) {
			pods = append(pods, s.genPod(name))
		}
		s.pods[name] = pods
		s.state.SetNode(s.nodes[name], pods)
	}
	return s
}

func (s *stream) logf(format string, args ...any) {
	s.events = append(s.events, fmt.Sprintf(format, args...))
}

// genParams draws settings as genParams does, now and then with a
// topology.
func (s *stream) genParams() Params {
	p := genParams(s.r, len(s.names))
	if !p.StartedAt.IsZero() {
		p.StartedAt = s.in.Now.Add(p.StartedAt.Sub(now))
	}
	if s.r.IntN(2) == 0 {
		p.Topology = s.genTopology()
	}
	return p
}

func (s *stream) genTopology() *Topology {
	r := s.r
	t := &Topology{MaxUnavailable: r.IntN(4), Sequential: r.IntN(3) != 0}
	if r.IntN(3) == 0 {
		t.Percent, t.MaxUnavailable = true, r.IntN(101)
	}
	domain := func() string {
		if r.IntN(3) == 0 {
			return ""
		}
		return streamDomains[r.IntN(len(streamDomains)-1)]
	}
	if t.Sequential {
		t.BakeTime = time.Duration(r.IntN(4)) * 30 * time.Second
		t.JudgedBakes, t.PassedThrough = r.IntN(2) == 0, domain()
		t.GatedDomains, t.GatesPassedThrough = r.IntN(2) == 0, domain()
	}
	return t
}

// genNode draws a node named name: desired mostly, else a misfit, unfit,
// in maintenance or unresponsive, in a random domain.
func (s *stream) genNode(name string) Node {
	r := s.r
	var n Node
	switch x := r.IntN(100); {
	case x < 75:
		n = desired(name)
	case x < 85:
		n = misfit(name)
	default:
		n = unfit(name)
	}
	n.Maintenance = r.IntN(12) == 0
	n.Unresponsive = r.IntN(12) == 0
	n.Domain = streamDomains[r.IntN(len(streamDomains))]
	return n
}

// genPod draws a pod on node: new or old, in any state a pod can be in.
func (s *stream) genPod(node string) Pod {
	r := s.r
	s.podID++
	p := Pod{
		Name:      fmt.Sprintf("pod-%d", s.podID),
		Node:      node,
		New:       r.IntN(2) == 0,
		CreatedAt: s.in.Now.Add(-time.Duration(r.IntN(6)) * time.Minute),
	}
	s.genReadiness(&p)
	switch x := r.IntN(100); {
	case x < 6:
		p.Failed, p.ReadySince = true, time.Time{}
	case x < 12:
		p.Terminating = true
	case x < 18 && p.New:
		p.Unschedulable, p.ReadySince = true, time.Time{}
	}
	if p.New {
		p.Updating = r.IntN(8) == 0
	} else {
		p.InPlace = r.IntN(2) == 0
		p.Draining = p.InPlace && r.IntN(6) == 0
		p.GateClosed = p.Draining || p.InPlace && r.IntN(10) == 0
		p.Returning = r.IntN(8) == 0
	}
	return p
}

// genReadiness makes p ready at some time around now, or not ready.
func (s *stream) genReadiness(p *Pod) {
	r, minReady := s.r, s.in.Params.MinReady
	switch x := r.IntN(100); {
	case x < 10:
		p.ReadySince = time.Time{}
	case x < 15: // available this very moment
		p.ReadySince = s.in.Now.Add(-minReady)
	case x < 20: // the node's clock is ahead
		p.ReadySince = s.in.Now.Add(time.Second + randDur(r, 10*time.Second))
	case x < 60: // ready, maybe not for minReady yet
		p.ReadySince = s.in.Now.Add(-randDur(r, 2*minReady+time.Second))
	default:
		p.ReadySince = s.in.Now.Add(-minReady - randDur(r, time.Hour))
	}
}

// pick returns a node name; known ones are drawn more often.
func (s *stream) pick() string {
	if len(s.nodes) > 0 && s.r.IntN(4) != 0 {
		known := slices.Sorted(maps.Keys(s.nodes))
		return known[s.r.IntN(len(known))]
	}
	return s.names[s.r.IntN(len(s.names))]
}

// setPods replaces the pods of node with pods, a new slice: the State
// keeps the one it was given.
func (s *stream) setPods(node string, pods []Pod) {
	if len(pods) == 0 {
		delete(s.pods, node)
	} else {
		s.pods[node] = pods
	}
	if n, ok := s.nodes[node]; ok {
		s.state.SetNode(n, pods)
	}
}

// changePod changes one pod of node in place of the old.
func (s *stream) changePod(node string) {
	pods := slices.Clone(s.pods[node])
	if len(pods) == 0 {
		return
	}
	p := &pods[s.r.IntN(len(pods))]
	switch s.r.IntN(9) {
	case 0:
		p.ReadySince = time.Time{}
		s.logf("%s on %s not ready", p.Name, node)
	case 1, 2:
		s.genReadiness(p)
		s.logf("%s on %s ready since %s", p.Name, node, p.ReadySince.Sub(s.in.Now))
	case 3:
		p.Failed, p.ReadySince = true, time.Time{}
		s.logf("%s on %s failed", p.Name, node)
	case 4:
		p.Terminating = true
		s.logf("%s on %s terminating", p.Name, node)
	case 5:
		p.Unschedulable = !p.Unschedulable
		s.logf("%s on %s unschedulable %t", p.Name, node, p.Unschedulable)
	case 6:
		// Updated in place: new, its containers not running the new
		// images yet.
		p.New, p.InPlace, p.Updating, p.GateClosed, p.Draining = true, false, true, false, false
		s.logf("%s on %s updated in place", p.Name, node)
	case 7:
		p.Draining, p.GateClosed = !p.Draining, !p.Draining
		s.logf("%s on %s draining %t", p.Name, node, p.Draining)
	default:
		p.Updating = false
		p.GateClosed, p.Draining = false, false
		s.logf("%s on %s settled", p.Name, node)
	}
	s.setPods(node, pods)
}

// event applies one random change.
func (s *stream) event() {
	r := s.r
	if r.IntN(100) < s.calm {
		s.rollOut(s.pick())
		return
	}
	switch x := r.IntN(100); {
	case x < 15:
		name := s.pick()
		n := s.genNode(name)
		s.nodes[name] = n
		s.state.SetNode(n, s.pods[name])
		s.logf("set %+v", n)
	case x < 19:
		name := s.pick()
		delete(s.nodes, name)
		s.state.DeleteNode(name)
		s.logf("delete node %s", name)
	case x < 33:
		node := s.pick()
		pod := s.genPod(node)
		s.setPods(node, append(slices.Clone(s.pods[node]), pod))
		s.logf("add %+v", pod)
	case x < 40:
		node := s.pick()
		if pods := s.pods[node]; len(pods) > 0 {
			i := r.IntN(len(pods))
			s.logf("remove %s from %s", pods[i].Name, node)
			s.setPods(node, slices.Delete(slices.Clone(pods), i, i+1))
		}
	case x < 58:
		s.changePod(s.pick())
	case x < 72:
		s.passTime()
	case x < 78:
		old := s.in.Params
		s.in.Params = s.tweakParams(old)
		s.logf("params %+v (topology %+v)", s.in.Params, s.in.Params.Topology)
	case x < 88:
		node := s.pick()
		b := maps.Clone(s.in.BackoffUntil)
		if _, ok := b[node]; ok && r.IntN(2) == 0 {
			delete(b, node)
			s.logf("backoff of %s ends", node)
		} else {
			b[node] = s.in.Now.Add(randDur(r, 2*time.Minute) - 30*time.Second)
			s.logf("backoff of %s until %s", node, b[node].Sub(s.in.Now))
		}
		s.in.BackoffUntil = b
	case x < 94:
		s.in.Elsewhere = Spent{Unavailable: r.IntN(3), Surging: r.IntN(3), Excused: r.IntN(2)}
		if r.IntN(2) == 0 {
			s.in.Elsewhere.Domains = map[string]int{streamDomains[r.IntN(len(streamDomains))]: r.IntN(3)}
		}
		s.logf("elsewhere %+v", s.in.Elsewhere)
	default:
		// A resync: the same node set again, unchanged.
		if name := s.pick(); s.nodes[name].Name != "" {
			s.state.SetNode(s.nodes[name], s.pods[name])
			s.logf("resync %s", name)
		}
	}
}

// rollOut leaves node one new pod, ready now or a while ago, as a
// rollout leaves it.
func (s *stream) rollOut(node string) {
	s.podID++
	p := Pod{Name: fmt.Sprintf("pod-%d", s.podID), Node: node, New: true, CreatedAt: s.in.Now, ReadySince: s.in.Now}
	if s.r.IntN(2) == 0 {
		p.ReadySince = s.in.Now.Add(-randDur(s.r, 2*s.in.Params.MinReady+time.Minute))
	}
	s.logf("roll %s out: %+v", node, p)
	s.setPods(node, []Pod{p})
}

// passTime moves the clock: a little, exactly to the moment a pod becomes
// available or a backoff ends, past minReady, or, rarely, back.
func (s *stream) passTime() {
	r := s.r
	var to time.Time
	switch x := r.IntN(100); {
	case x < 35:
		to = s.in.Now.Add(time.Duration(1+r.IntN(5)) * time.Second)
	case x < 60:
		to = s.in.Now.Add(s.in.Params.MinReady + randDur(r, time.Minute))
	case x < 85:
		var times []time.Time
		for _, pods := range s.pods {
			for _, p := range pods {
				if p.Ready() {
					times = append(times, p.ReadySince.Add(s.in.Params.MinReady))
				}
			}
		}
		for _, until := range s.in.BackoffUntil {
			times = append(times, until)
		}
		if t := s.in.Params.Topology; t != nil {
			times = append(times, s.in.Now.Add(t.BakeTime))
		}
		times = slices.DeleteFunc(times, func(t time.Time) bool { return !t.After(s.in.Now) })
		if len(times) == 0 {
			return
		}
		slices.SortFunc(times, time.Time.Compare)
		to = times[r.IntN(min(3, len(times)))]
	case x < 97:
		to = s.in.Now.Add(randDur(r, time.Hour))
	default:
		to = s.in.Now.Add(-randDur(r, time.Minute))
	}
	s.logf("time %+v", to.Sub(s.in.Now))
	s.in.Now = to
}

// tweakParams changes one setting, or draws them all afresh.
func (s *stream) tweakParams(p Params) Params {
	r := s.r
	switch r.IntN(9) {
	case 0:
		p.MaxUnavailable = r.IntN(len(s.names) + 1)
	case 1:
		p.MaxSurge = r.IntN(4)
	case 2:
		p.Paused = !p.Paused
	case 3:
		p.Frozen = !p.Frozen
	case 4:
		p.MinReady = time.Duration(r.IntN(3)) * 30 * time.Second
	case 5:
		if p.Topology == nil || r.IntN(3) == 0 {
			p.Topology = s.genTopology()
		} else {
			p.Topology = nil
		}
	case 6:
		p.SlowStartInterval = time.Duration(r.IntN(3)) * time.Minute
		p.SlowStartIncrease = r.IntN(4)
		p.StartedAt = s.in.Now.Add(-randDur(r, 10*time.Minute))
	case 7:
		p.MaxPodSchedulerFailure = r.IntN(3)
		p.MaxParallelPodCreation = r.IntN(6)
	default:
		return s.genParams()
	}
	return p
}

// streamStats count what the plans of streams did, to show that the
// streams reach every part of the planner.
type streamStats struct {
	plans, create, del, inPlace, reopen, failed, requeue, baking int
}

func (st *streamStats) add(plan Plan) {
	st.plans++
	for _, c := range []struct {
		n   *int
		did bool
	}{
		{&st.create, len(plan.Create) > 0}, {&st.del, len(plan.Delete) > 0}, {&st.inPlace, len(plan.UpdateInPlace) > 0},
		{&st.reopen, len(plan.Reopen) > 0}, {&st.failed, len(plan.FailedNodes) > 0}, {&st.requeue, plan.RequeueAfter > 0},
		{&st.baking, slices.ContainsFunc(plan.Counts.Domains, func(d DomainCounts) bool { return d.State == DomainBaking })},
	} {
		if c.did {
			*c.n++
		}
	}
}

// check compares the State's plan with Compute over what the State
// recorded, and with a State built afresh from it, and the record with the
// stream; it says how they differ, empty when they do not.
func (s *stream) check(stats *streamStats) string {
	got := s.state.Plan(s.in)
	stats.add(got)
	full := s.state.Input()
	if err := s.sameRecord(full); err != "" {
		return err
	}
	in := s.in
	in.Nodes, in.Pods = full.Nodes, full.Pods
	if diff := DiffPlans(Compute(in), got); diff != "" {
		return "State.Plan differs from Compute (-Compute +State):\n" + diff
	}
	if diff := sameNodeCounts(in, got); diff != "" {
		return diff
	}
	fresh := NewState()
	for _, n := range full.Nodes {
		fresh.SetNode(n, full.Pods[n.Name])
	}
	if diff := DiffPlans(fresh.Plan(s.in), got); diff != "" {
		return "State.Plan differs from a State built afresh (-fresh +kept):\n" + diff
	}
	return ""
}

// sameRecord says how the State's record differs from the stream's nodes
// and pods.
func (s *stream) sameRecord(full Input) string {
	if len(full.Nodes) != len(s.nodes) {
		return fmt.Sprintf("the State records %d nodes, the stream has %d", len(full.Nodes), len(s.nodes))
	}
	for _, n := range full.Nodes {
		if n != s.nodes[n.Name] || !slices.Equal(full.Pods[n.Name], s.pods[n.Name]) {
			return fmt.Sprintf("the State records %+v with pods %+v, the stream %+v with %+v",
				n, full.Pods[n.Name], s.nodes[n.Name], s.pods[n.Name])
		}
	}
	return ""
}

// runStream plays steps steps of a stream drawn from r over up to size
// nodes, checking the State after each; it returns the failure, empty
// when none.
func runStream(r *rand.Rand, size, steps int, stats *streamStats) string {
	s := newStream(r, size)
	for step := range steps {
		s.events = s.events[:0]
		for range 1 + r.IntN(3) {
			s.event()
		}
		if diff := s.check(stats); diff != "" {
			return fmt.Sprintf("step %d, %d nodes, params %+v, topology %+v, now %s, backoff %v, after:\n  %s\n%s",
				step, len(s.nodes), s.in.Params, s.in.Params.Topology, s.in.Now, s.in.BackoffUntil,
				strings.Join(s.events, "\n  "), diff)
		}
	}
	return ""
}

// TestStateMatchesComputeOnRandomEventStreams feeds States random event
// streams (nodes set and deleted, pods added, removed and changing state,
// time passing, params, backoffs and the other replica set's spending
// changing) and checks after each step that the State plans exactly as
// Compute does over what it recorded, and as a State built afresh.
func TestStateMatchesComputeOnRandomEventStreams(t *testing.T) {
	seed, only := propertySeed(t)
	seeds, steps := 200, 300
	if testing.Short() {
		seeds = 100
	}
	start := time.Now()
	var stats streamStats
	for c := range seeds {
		if only >= 0 && c != only {
			continue
		}
		r := caseRand(seed, c)
		size := 4 + r.IntN(40)
		if c%10 == 0 {
			size = 200
		}
		if failure := runStream(r, size, steps, &stats); failure != "" {
			t.Fatalf("case %d: %s\nreplay with %s=%d %s=%d", c, failure, seedEnv, seed, caseEnv, c)
		}
	}
	t.Logf("%d streams of %d steps in %s; plans that create %d, delete %d, update in place %d, reopen %d, fail nodes %d, requeue %d, bake %d, of %d",
		seeds, steps, time.Since(start).Round(time.Millisecond),
		stats.create, stats.del, stats.inPlace, stats.reopen, stats.failed, stats.requeue, stats.baking, stats.plans)
}

// FuzzState plays the event streams of
// TestStateMatchesComputeOnRandomEventStreams drawn from the fuzzer's
// bytes.
func FuzzState(f *testing.F) {
	f.Add([]byte{})
	addRandomSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := rand.New(newByteSource(data))
		if failure := runStream(r, 2+r.IntN(24), 60, &streamStats{}); failure != "" {
			t.Fatal(failure)
		}
	})
}

// tracker plans with a State kept across the steps of a simulation: each
// step, it sets in the State only the nodes whose node or pods changed
// since the last, as watch events would, and checks that the State's plan
// is Compute's.
type tracker struct {
	state *State
	nodes map[string]Node
	pods  map[string][]Pod
}

func newTracker() *tracker {
	return &tracker{state: NewState(), nodes: map[string]Node{}, pods: map[string][]Pod{}}
}

// plan feeds the State what changed in in, and returns its plan, with an
// error when Compute(in) plans otherwise.
func (tr *tracker) plan(in Input) (Plan, error) {
	tr.feed(in)
	plan := tr.state.Plan(in)
	if diff := DiffPlans(Compute(in), plan); diff != "" {
		return plan, fmt.Errorf("the State kept across steps plans otherwise than Compute (-Compute +State):\n%s", diff)
	}
	return plan, nil
}

// feed sets the nodes of in that are new or changed, and deletes those
// gone. The simulations change their pods in place, so the State is given
// copies.
func (tr *tracker) feed(in Input) {
	seen := make(map[string]bool, len(in.Nodes))
	for _, n := range in.Nodes {
		seen[n.Name] = true
		pods := in.Pods[n.Name]
		if old, ok := tr.nodes[n.Name]; ok && old == n && slices.Equal(tr.pods[n.Name], pods) {
			continue
		}
		pods = slices.Clone(pods)
		tr.nodes[n.Name], tr.pods[n.Name] = n, pods
		tr.state.SetNode(n, pods)
	}
	for name := range tr.nodes {
		if !seen[name] {
			delete(tr.nodes, name)
			delete(tr.pods, name)
			tr.state.DeleteNode(name)
		}
	}
}

// TestStateFollowsWhatNoNodeEventTells changes, for each case, something
// no SetNode tells the State of (the time, a backoff, the params), or
// something the sums must take back (a node gone, a domain's latest
// pod replaced), and checks that the plan changes as Compute's does.
func TestStateFollowsWhatNoNodeEventTells(t *testing.T) {
	zoned := func(name, zone string) Node {
		n := desired(name)
		n.Domain = zone
		return n
	}
	baking := Params{MaxUnavailable: 1, MaxParallelPodCreation: 10,
		Topology: &Topology{MaxUnavailable: 1, Sequential: true, BakeTime: time.Hour}}
	cases := []struct {
		name   string
		in     Input
		change func(s *State, in *Input)
	}{{
		name:   "a pod becomes available as time passes",
		in:     input(Params{MaxUnavailable: 1, MinReady: 10 * time.Second}, desiredNodes("a"), newPod("n-a", "a", readyFor(5*time.Second))),
		change: func(_ *State, in *Input) { in.Now = in.Now.Add(5 * time.Second) },
	}, {
		name:   "a backoff ends as time passes",
		in:     withBackoff(input(Params{MaxUnavailable: 1}, desiredNodes("a"), newPod("n-a", "a", failed)), "a", now.Add(30*time.Second)),
		change: func(_ *State, in *Input) { in.Now = in.Now.Add(30 * time.Second) },
	}, {
		name:   "a backoff is lifted",
		in:     withBackoff(input(Params{MaxUnavailable: 1}, desiredNodes("a"), newPod("n-a", "a", failed)), "a", now.Add(30*time.Second)),
		change: func(_ *State, in *Input) { in.BackoffUntil = nil },
	}, {
		name: "a backoff begins",
		in:   input(Params{MaxUnavailable: 1}, desiredNodes("a"), newPod("n-a", "a", failed)),
		change: func(_ *State, in *Input) {
			in.BackoffUntil = map[string]time.Time{"a": in.Now.Add(time.Minute)}
		},
	}, {
		name:   "minReady grows",
		in:     input(Params{MaxUnavailable: 1}, desiredNodes("a"), newPod("n-a", "a", readyFor(5*time.Second))),
		change: func(_ *State, in *Input) { in.Params.MinReady = 10 * time.Second },
	}, {
		name:   "time goes back",
		in:     input(Params{MaxUnavailable: 1, MinReady: 3 * time.Second}, desiredNodes("a"), newPod("n-a", "a", readyFor(5*time.Second))),
		change: func(_ *State, in *Input) { in.Now = in.Now.Add(-5 * time.Second) },
	}, {
		name: "a topology is set",
		in:   input(Params{MaxUnavailable: 1}, []Node{zoned("a", "zone-a")}, oldPod("o-a", "a")),
		change: func(_ *State, in *Input) {
			in.Params.Topology = &Topology{MaxUnavailable: 1}
		},
	}, {
		name: "a node goes",
		in:   input(Params{MaxUnavailable: 1}, desiredNodes("a", "b"), oldPod("o-a", "a"), newPod("n-b", "b")),
		change: func(s *State, in *Input) {
			s.DeleteNode("b")
			in.Nodes = in.Nodes[:1]
		},
	}, {
		name: "the latest pod of a baking domain is replaced by one available earlier",
		in: input(baking, []Node{zoned("a", "zone-a"), zoned("b", "zone-a"), zoned("c", "zone-b")},
			newPod("n-a", "a", readyFor(time.Hour)), newPod("n-b", "b", readyFor(time.Minute)), oldPod("o-c", "c")),
		change: func(s *State, in *Input) {
			pods := []Pod{newPod("n-b2", "b", readyFor(2*time.Hour))}
			s.SetNode(in.Nodes[1], pods)
			in.Pods["b"] = pods
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := buildState(tc.in)
			if diff := DiffPlans(Compute(tc.in), s.Plan(tc.in)); diff != "" {
				t.Fatalf("the State plans otherwise than Compute before the change (-Compute +State):\n%s", diff)
			}
			in := tc.in
			in.Pods = maps.Clone(tc.in.Pods)
			tc.change(s, &in)
			want := Compute(in)
			if diff := DiffPlans(want, s.Plan(in)); diff != "" {
				t.Fatalf("the State plans otherwise than Compute after the change (-Compute +State):\n%s", diff)
			}
			if DiffPlans(Compute(tc.in), want) == "" {
				t.Fatalf("the change changes nothing, so the case proves nothing: %+v", want)
			}
		})
	}
}

// TestStateCheck: Check finds sums gone wrong, says how the plans differ,
// and leaves the State planning right again.
func TestStateCheck(t *testing.T) {
	in := input(Params{MaxUnavailable: 1}, desiredNodes("a", "b"), oldPod("o-a", "a"), newPod("n-b", "b"))
	s := buildState(in)
	if err := s.Check(in); err != nil {
		t.Fatalf("Check of a sound State: %v", err)
	}
	s.sums.tally.Desired++
	err := s.Check(in)
	if err == nil || !strings.Contains(err.Error(), "Counts:") {
		t.Fatalf("Check of a State whose desired count is off by one says %v, want the Counts that differ", err)
	}
	if err := s.Check(in); err != nil {
		t.Fatalf("Check after a failed one: %v", err)
	}
}
