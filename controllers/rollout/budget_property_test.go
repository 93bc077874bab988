package rollout

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// fleet is an ExtendedDaemonSet with a canary beside its active replica
// set: canary nodes run (or are to run) template "canary", the others
// template "active"; pods of "old" are left over from an earlier rolling
// update. Both replica sets plan from the same pods, each with what the
// other spends, as the controller does.
type fleet struct {
	nodes  []string
	canary map[string]bool
	// maintenance are the nodes in maintenance now: left alone, their
	// agents out of the budgets.
	maintenance map[string]bool
	// pods by node; Pod.New is meaningless here, owner says whose pod it is.
	pods    map[string][]fleetPod
	params  Params
	now     time.Time
	created int
	// trackers hold each replica set's State across rounds.
	trackers map[string]*tracker
}

type fleetPod struct {
	Pod
	owner string
}

const (
	activeRS = "active"
	canaryRS = "canary"
	oldRS    = "old"
)

// side is the planner input of one replica set: its nodes and the pods
// there, new when they are its own.
func (f *fleet) side(rs string) Input {
	in := Input{Pods: map[string][]Pod{}, Params: f.params, Now: f.now}
	for _, name := range f.nodes {
		if f.canary[name] != (rs == canaryRS) {
			continue
		}
		in.Nodes = append(in.Nodes, Node{Name: name, ShouldRun: true, ShouldContinueRunning: true, Maintenance: f.maintenance[name]})
		for _, p := range f.pods[name] {
			pod := p.Pod
			pod.New = p.owner == rs
			in.Pods[name] = append(in.Pods[name], pod)
		}
	}
	return in
}

// plan is what rs plans now, knowing what the other one spends, each
// replica set planning with a State kept across rounds, which must plan
// as Compute does.
func (f *fleet) plan(t *testing.T, rs string) Plan {
	t.Helper()
	other := activeRS
	if rs == activeRS {
		other = canaryRS
	}
	elsewhere := f.side(other)
	elsewhere.Params.Frozen = true
	in := f.side(rs)
	spent, err := f.tracker(other).plan(elsewhere)
	if err != nil {
		t.Fatalf("%s, frozen: %v", other, err)
	}
	in.Elsewhere = spent.Counts.Spent()
	plan, err := f.tracker(rs).plan(in)
	if err != nil {
		t.Fatalf("%s: %v", rs, err)
	}
	return plan
}

func (f *fleet) tracker(rs string) *tracker {
	if f.trackers == nil {
		f.trackers = map[string]*tracker{}
	}
	if f.trackers[rs] == nil {
		f.trackers[rs] = newTracker()
	}
	return f.trackers[rs]
}

func (f *fleet) apply(rs string, plan Plan) {
	for _, d := range plan.Delete {
		for i := range f.pods[d.Node] {
			if f.pods[d.Node][i].Name == d.Pod {
				f.pods[d.Node][i].Terminating = true
			}
		}
	}
	for _, node := range plan.Create {
		f.created++
		f.pods[node] = append(f.pods[node], fleetPod{
			Pod:   Pod{Name: fmt.Sprintf("%s-%d", rs, f.created), Node: node, CreatedAt: f.now},
			owner: rs,
		})
	}
}

// unavailable counts nodes without an available pod, whoever owns it,
// nodes in maintenance aside.
func (f *fleet) unavailable() int {
	n := 0
	for _, node := range f.nodes {
		if !f.maintenance[node] && !slices.ContainsFunc(f.pods[node], func(p fleetPod) bool { return p.Available(f.params.MinReady, f.now) }) {
			n++
		}
	}
	return n
}

// surging counts nodes with two live pods.
func (f *fleet) surging() int {
	n := 0
	for _, node := range f.nodes {
		live := 0
		for _, p := range f.pods[node] {
			if !p.Terminating {
				live++
			}
		}
		if live > 1 {
			n++
		}
	}
	return n
}

// settle lets time pass: pods being created become ready, pods terminating
// go away, each with a chance. While maintenance lasts, nodes enter and
// leave it, and a drain takes the agents of some nodes in it down.
func (f *fleet) settle(r *rand.Rand, maintenance bool) {
	f.now = f.now.Add(time.Second)
	for _, node := range f.nodes {
		switch {
		case !maintenance:
			delete(f.maintenance, node)
		case r.IntN(20) == 0:
			f.maintenance[node] = !f.maintenance[node]
		case f.maintenance[node] && r.IntN(4) == 0:
			for i := range f.pods[node] {
				f.pods[node][i].ReadySince = time.Time{}
			}
		}
	}
	for node, pods := range f.pods {
		kept := pods[:0]
		for _, p := range pods {
			switch {
			case p.Terminating && r.IntN(2) == 0:
				continue
			case !p.Terminating && p.ReadySince.IsZero() && r.IntN(2) == 0:
				p.ReadySince = f.now
			}
			kept = append(kept, p)
		}
		f.pods[node] = kept
	}
}

// done: every canary node runs one available canary pod, every other node
// one available active pod.
func (f *fleet) done() bool {
	for _, node := range f.nodes {
		want := activeRS
		if f.canary[node] {
			want = canaryRS
		}
		pods := f.pods[node]
		if len(pods) != 1 || pods[0].owner != want || !pods[0].Available(f.params.MinReady, f.now) {
			return false
		}
	}
	return true
}

func genFleet(r *rand.Rand) *fleet {
	n := 2 + r.IntN(30)
	f := &fleet{canary: map[string]bool{}, maintenance: map[string]bool{}, pods: map[string][]fleetPod{}, now: time.Unix(1_000_000, 0)}
	f.params = genParams(r, n)
	f.params.MinReady, f.params.SlowStartInterval, f.params.Paused, f.params.Frozen = 0, 0, false, false
	canaries := 1 + r.IntN(n)
	for i := range n {
		name := fmt.Sprintf("node-%02d", i)
		f.nodes = append(f.nodes, name)
		f.canary[name] = i < canaries
		// An active replica set may still be rolling out over older pods,
		// and some agents may already be down.
		owner := activeRS
		if r.IntN(3) == 0 {
			owner = oldRS
		}
		pod := fleetPod{Pod: Pod{Name: fmt.Sprintf("%s-%s", owner, name), Node: name}, owner: owner}
		if r.IntN(8) != 0 {
			pod.ReadySince = f.now.Add(-time.Hour)
		}
		f.pods[name] = []fleetPod{pod}
	}
	// Surges caught mid-way, within maxSurge: a canary that took a node
	// where the active replica set surged over the old one, or a canary's
	// pod left beside an old one on a node that is the active's again.
	// Neither pod is of the replica set now responsible for the node.
	for i := range min(f.params.MaxSurge, r.IntN(3)) {
		name := f.nodes[r.IntN(n)]
		if len(f.pods[name]) > 1 {
			continue
		}
		owner := activeRS
		if !f.canary[name] {
			owner = canaryRS
		}
		f.pods[name][0].owner = oldRS
		extra := fleetPod{Pod: Pod{Name: fmt.Sprintf("%s-%s-%d", owner, name, i), Node: name}, owner: owner}
		if r.IntN(2) == 0 {
			extra.ReadySince = f.now.Add(-time.Minute)
		}
		f.pods[name] = append(f.pods[name], extra)
	}
	return f
}

// TestPropertyCanaryAndActiveShareOneBudget plans a canary and the active
// replica set together, each knowing what the other spends, in a random
// order, and checks that together they never take more nodes down than
// maxUnavailable nor surge on more than maxSurge nodes, and that the fleet
// ends with the canary on its nodes and the active template elsewhere.
// For its first rounds, nodes enter and leave maintenance, and some of
// their agents go down: those count against neither budget, and a node
// entering maintenance mid-surge still ends its surge.
func TestPropertyCanaryAndActiveShareOneBudget(t *testing.T) {
	seed, only := propertySeed(t)
	for c := range 300 {
		if only >= 0 && c != only {
			continue
		}
		r := caseRand(seed, c)
		f := genFleet(r)
		for round := 0; !f.done(); round++ {
			if round == 500 {
				t.Fatalf("seed %d case %d: no convergence after %d rounds: %+v", seed, c, round, f.pods)
			}
			order := []string{activeRS, canaryRS}
			if r.IntN(2) == 0 {
				order[0], order[1] = order[1], order[0]
			}
			for _, rs := range order {
				uBefore, sBefore := f.unavailable(), f.surging()
				plan := f.plan(t, rs)
				if touched := f.touchedInMaintenance(plan); touched != "" {
					t.Fatalf("seed %d case %d round %d: %s %s", seed, c, round, rs, touched)
				}
				f.apply(rs, plan)
				if u := f.unavailable(); u > f.params.MaxUnavailable && u > uBefore {
					t.Fatalf("seed %d case %d round %d: %s took %d nodes down (was %d), maxUnavailable %d, maxSurge %d",
						seed, c, round, rs, u, uBefore, f.params.MaxUnavailable, f.params.MaxSurge)
				}
				if s := f.surging(); s > f.params.MaxSurge && s > sBefore {
					t.Fatalf("seed %d case %d round %d: %s surges on %d nodes (was %d), maxSurge %d",
						seed, c, round, rs, s, sBefore, f.params.MaxSurge)
				}
			}
			f.settle(r, round < maintenanceRounds)
		}
	}
}

// touchedInMaintenance says what plan does on a node in maintenance
// other than ending a surge there, empty when nothing.
func (f *fleet) touchedInMaintenance(plan Plan) string {
	for _, node := range plan.Create {
		if f.maintenance[node] {
			return "creates a pod on " + node + ", in maintenance"
		}
	}
	for _, d := range plan.Delete {
		if f.maintenance[d.Node] && d.Reason != DeleteSurgeEnded {
			return fmt.Sprintf("deletes %s on %s, in maintenance (%s)", d.Pod, d.Node, d.Reason)
		}
	}
	for _, u := range plan.UpdateInPlace {
		if f.maintenance[u.Node] {
			return "updates " + u.Pod + " in place on " + u.Node + ", in maintenance"
		}
	}
	return ""
}

// maintenanceRounds is how long nodes go in and out of maintenance in
// TestPropertyCanaryAndActiveShareOneBudget before it lets the fleet
// converge.
const maintenanceRounds = 60

// TestCanaryReplacedUnderTheBudget is the first report of the budget being
// broken: 6 nodes, maxUnavailable 1, a canary on half of them.
func TestCanaryReplacedUnderTheBudget(t *testing.T) {
	f := &fleet{canary: map[string]bool{}, pods: map[string][]fleetPod{}, now: time.Unix(1_000_000, 0)}
	f.params = Params{MaxUnavailable: 1, MaxParallelPodCreation: 250}
	for i := range 6 {
		name := fmt.Sprintf("node-%d", i)
		f.nodes = append(f.nodes, name)
		f.canary[name] = i < 3
		f.pods[name] = []fleetPod{{Pod: Pod{Name: "active-" + name, Node: name, ReadySince: f.now.Add(-time.Hour)}, owner: activeRS}}
	}
	plan := f.plan(t, canaryRS)
	if len(plan.Delete) != 1 {
		t.Fatalf("the canary deletes %d pods at once, want 1 under maxUnavailable 1: %+v", len(plan.Delete), plan.Delete)
	}
	f.apply(canaryRS, plan)
	if plan := f.plan(t, activeRS); len(plan.Delete) != 0 {
		t.Fatalf("the active replica set deletes %+v while the canary spends the whole budget", plan.Delete)
	}
}

// TestCanaryTookASurgingNode: the canary took a node where the active
// replica set was surging over an older one. Until the canary deletes one
// of the two, the node runs two agents, and the active replica set may not
// surge on another node under maxSurge 1.
func TestCanaryTookASurgingNode(t *testing.T) {
	f := &fleet{canary: map[string]bool{}, pods: map[string][]fleetPod{}, now: time.Unix(1_000_000, 0)}
	f.params = Params{MaxSurge: 1, MaxParallelPodCreation: 250}
	ready := f.now.Add(-time.Hour)
	for i := range 4 {
		name := fmt.Sprintf("node-%d", i)
		f.nodes = append(f.nodes, name)
		f.canary[name] = i == 0
		f.pods[name] = []fleetPod{{Pod: Pod{Name: "old-" + name, Node: name, ReadySince: ready}, owner: oldRS}}
	}
	f.pods["node-0"] = append(f.pods["node-0"], fleetPod{Pod: Pod{Name: "active-node-0", Node: "node-0"}, owner: activeRS})
	if plan := f.plan(t, activeRS); len(plan.Create) != 0 {
		t.Fatalf("the active replica set surges on %v while the canary's node runs two agents, maxSurge 1", plan.Create)
	}
	plan := f.plan(t, canaryRS)
	if len(plan.Create) != 0 || len(plan.Delete) != 1 || plan.Delete[0].Reason != DeleteDuplicate {
		t.Fatalf("the canary plans %+v, want one duplicate deleted and nothing created beside the other", plan)
	}
}
