package rollout

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// byteSource is a rand.Source drawing from a fuzzer's bytes, so that the
// generators of the property tests build the fuzzer's clusters. Each byte
// is one draw, spread over 64 bits so that IntN maps it evenly onto small
// ranges: changing a byte changes one decision. Past the end it goes on
// with a fixed stream, since a source stuck at zero would keep IntN's
// rejection sampling drawing forever.
type byteSource struct {
	data []byte
	rest rand.Source
}

func newByteSource(data []byte) *byteSource {
	return &byteSource{data: data, rest: rand.NewPCG(uint64(len(data)), 0)}
}

func (s *byteSource) Uint64() uint64 {
	if len(s.data) == 0 {
		return s.rest.Uint64()
	}
	b := s.data[0]
	s.data = s.data[1:]
	return uint64(b) * 0x0101010101010101
}

// fuzzFleet is an ExtendedDaemonSet with a canary beside its active replica
// set, as each of them plans it: the side of a replica set holds its nodes,
// and a pod there is New when it is that replica set's own.
type fuzzFleet struct {
	sides map[string]*world
}

// genFuzzFleet draws a fleet of up to 64 nodes with the generators of the
// property tests, then splits it between a canary and the active replica
// set and marks some nodes unresponsive. The old pods of a side may be the
// other side's or an older replica set's: the planner cannot tell them
// apart. Budgets are sometimes percentages, resolved as the controller does
// against every node the ExtendedDaemonSet runs on.
func genFuzzFleet(t *testing.T, r *rand.Rand) *fuzzFleet {
	n := 1 + r.IntN(64)
	w := genWorld(r, n, r.IntN(4) == 0)
	canaries := r.IntN(n + 1)
	desiredCount := 0
	for i := range w.nodes {
		w.nodes[i].Unresponsive = r.IntN(10) == 0
		if w.nodes[i].ShouldRun {
			desiredCount++
		}
	}
	percent := func(budget *int) {
		if r.IntN(3) != 0 {
			return
		}
		v := intstr.FromString(fmt.Sprintf("%d%%", r.IntN(101)))
		resolved, err := intstr.GetScaledValueFromIntOrPercent(&v, desiredCount, true)
		if err != nil {
			t.Fatalf("resolving %s: %v", v.String(), err)
		}
		*budget = resolved
	}
	percent(&w.params.MaxUnavailable)
	percent(&w.params.MaxSurge)

	f := &fuzzFleet{sides: map[string]*world{}}
	for _, rs := range []string{canaryRS, activeRS} {
		f.sides[rs] = &world{pods: map[string][]Pod{}, backoff: w.backoff, params: w.params, now: w.now}
	}
	for i, node := range w.nodes {
		side := f.sides[activeRS]
		if i < canaries {
			side = f.sides[canaryRS]
		}
		side.nodes = append(side.nodes, node)
		side.pods[node.Name] = w.pods[node.Name]
	}
	return f
}

// other is the replica set sharing the budgets with rs.
func other(rs string) string {
	if rs == canaryRS {
		return activeRS
	}
	return canaryRS
}

// budget is what a side spends of the shared budgets, counted from the
// pods as the planner is meant to: responsive nodes only, a node without
// an available pod when it should run one, a surge where a pod of the
// node's replica set runs beside another, and the unavailable nodes that
// maxPodSchedulerFailure excuses. A failed pod runs no agent, so it makes
// no surge: the planner may reserve one for it while it backs off, but
// need not.
type budget struct {
	unavailable, surging, excused int
	schedulerFailures, allowance  int
}

func budgetOf(w *world) budget {
	var b budget
	schedulerFailures := 0
	for _, n := range w.nodes {
		if n.Unresponsive || n.Maintenance || !n.ShouldContinueRunning {
			continue
		}
		running := func(isNew bool) bool {
			return slices.ContainsFunc(w.pods[n.Name], func(p Pod) bool { return p.New == isNew && !p.Terminating && !p.Failed })
		}
		if running(true) && running(false) {
			b.surging++
		}
		if !n.ShouldRun || w.hasAvailable(n.Name) {
			continue
		}
		b.unavailable++
		if slices.ContainsFunc(w.pods[n.Name], func(p Pod) bool {
			return p.New && p.Unschedulable && !p.Failed && !p.Terminating
		}) {
			schedulerFailures++
		}
	}
	b.schedulerFailures = schedulerFailures
	b.allowance = w.params.MaxPodSchedulerFailure
	return b
}

// plus is both sides together: one maxPodSchedulerFailure allowance
// excuses the scheduler failures of both, as one maxUnavailable bounds them.
func (b budget) plus(o budget) budget {
	sum := budget{unavailable: b.unavailable + o.unavailable, surging: b.surging + o.surging,
		schedulerFailures: b.schedulerFailures + o.schedulerFailures, allowance: b.allowance}
	sum.excused = min(sum.schedulerFailures, sum.allowance)
	return sum
}

// planSide plans rs as the controller does, knowing what the other side
// spends, and returns the plan and what breaks the planner's promises.
func (f *fuzzFleet) planSide(rs string) (Plan, []string) {
	w, elsewhere := f.sides[rs], f.sides[other(rs)].input()
	elsewhere.Params.Frozen = true
	if rs == activeRS {
		// As the controller sees it: the active side takes the
		// scheduler-failure allowance first.
		elsewhere.Elsewhere.Excused = w.params.MaxPodSchedulerFailure
	}
	in := w.input()
	in.Elsewhere = Compute(elsewhere).Counts.Spent()

	snapshot := w.clone()
	plan := Compute(in)
	if !reflect.DeepEqual(snapshot, w) {
		return plan, []string{"Compute modified its input"}
	}
	if again := Compute(in); !reflect.DeepEqual(again, plan) {
		return plan, []string{fmt.Sprintf("Compute is not deterministic: %+v then %+v", plan, again)}
	}
	return plan, nil
}

// checkSide checks one side's plan against the fleet before it (f) and
// after it (after); errs lists what breaks.
func checkSide(f *fuzzFleet, rs string, plan Plan, after *world) []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	w := f.sides[rs]
	params := w.params
	nodes := make(map[string]Node, len(w.nodes))
	desiredCount, ignored, inMaintenance := 0, 0, 0
	for _, n := range w.nodes {
		nodes[n.Name] = n
		switch {
		case n.Maintenance:
			if n.ShouldContinueRunning {
				inMaintenance++
			}
		case n.Unresponsive && n.ShouldRun:
			ignored++
		case !n.Unresponsive && n.ShouldRun && n.ShouldContinueRunning:
			desiredCount++
		}
	}
	if params.Frozen && len(plan.Create)+len(plan.Delete)+len(plan.UpdateInPlace)+len(plan.FailedNodes) > 0 {
		fail("frozen, yet the plan creates %v, deletes %v, updates %v, fails %v", plan.Create, plan.Delete, plan.UpdateInPlace, plan.FailedNodes)
	}
	for _, u := range plan.UpdateInPlace {
		switch n, ok := nodes[u.Node]; {
		case !ok:
			fail("updates %s on %s, a node of the other replica set or none", u.Pod, u.Node)
		case n.Unresponsive || n.Maintenance || !n.ShouldRun:
			fail("updates %s in place on %s, which should not run a pod now (unresponsive %t, in maintenance %t)", u.Pod, w.describe(u.Node), n.Unresponsive, n.Maintenance)
		}
	}
	if c := plan.Counts; c.Desired != desiredCount || c.IgnoredUnresponsive != ignored || c.InMaintenance != inMaintenance {
		fail("counts %d desired, %d unresponsive and %d nodes in maintenance, want %d, %d and %d",
			c.Desired, c.IgnoredUnresponsive, c.InMaintenance, desiredCount, ignored, inMaintenance)
	}

	deleted := map[string]bool{}
	for _, d := range plan.Delete {
		n, ok := nodes[d.Node]
		switch p, found := w.findPod(d.Node, d.Pod); {
		case !ok:
			fail("deletes %s on %s, a node of the other replica set or none", d.Pod, d.Node)
		case n.Unresponsive:
			fail("deletes %s (%s) on unresponsive %s", d.Pod, d.Reason, w.describe(d.Node))
		case n.Maintenance && d.Reason != DeleteSurgeEnded:
			fail("deletes %s (%s) on %s, in maintenance, other than to end a surge", d.Pod, d.Reason, w.describe(d.Node))
		case !found:
			fail("deletes %s, which is not on %s", d.Pod, w.describe(d.Node))
		case p.Terminating:
			fail("deletes %s (%s), which is already terminating: %s", d.Pod, d.Reason, w.describe(d.Node))
		case deleted[d.Pod]:
			fail("deletes %s twice", d.Pod)
		}
		deleted[d.Pod] = true
	}
	for _, node := range plan.FailedNodes {
		if !slices.ContainsFunc(plan.Delete, func(d Deletion) bool { return d.Node == node && d.Reason == DeleteFailed }) {
			fail("reports %s as failed but deletes no failed pod there", node)
		}
	}

	created := map[string]bool{}
	for _, node := range plan.Create {
		n, ok := nodes[node]
		switch {
		case created[node]:
			fail("creates two pods on %s in one plan", node)
		case !ok:
			fail("creates a pod on %s, a node of the other replica set or none", node)
		case !n.ShouldRun || n.Unresponsive || n.Maintenance:
			fail("creates a pod on %s, which should not run one now (unresponsive %t, in maintenance %t)", w.describe(node), n.Unresponsive, n.Maintenance)
		case w.hasTerminating(node):
			fail("creates a pod on %s, which still has a pod terminating", w.describe(node))
		}
		created[node] = true
		if newPods, _ := after.occupancy(node); newPods > 1 {
			fail("after the plan %s holds %d pods of its replica set", after.describe(node), newPods)
		}
	}

	// The budgets are the ExtendedDaemonSet's, across both sides: the
	// other side is as it was.
	elsewhere := budgetOf(f.sides[other(rs)])
	was, is := budgetOf(w).plus(elsewhere), budgetOf(after).plus(elsewhere)
	limit := params.MaxUnavailable + was.excused
	// In-place updates spend maxUnavailable in surge mode too.
	deleteMode := params.MaxSurge == 0 || len(plan.UpdateInPlace) > 0
	switch {
	case deleteMode && is.unavailable > max(limit, was.unavailable):
		fail("delete mode: %d nodes without an available pod after the plan, %d before, maxUnavailable %d + %d unschedulable excused, %d in-place updates",
			is.unavailable, was.unavailable, params.MaxUnavailable, was.excused, len(plan.UpdateInPlace))
	case !deleteMode && is.unavailable > was.unavailable:
		fail("surge mode: %d nodes without an available pod after the plan, %d before", is.unavailable, was.unavailable)
	}
	if is.surging > max(params.MaxSurge, was.surging) {
		fail("%d nodes surge after the plan, %d before, maxSurge %d", is.surging, was.surging, params.MaxSurge)
	}
	return errs
}

// addRandomSeeds adds to f's corpus eight inputs of random bytes, the
// same at every run.
func addRandomSeeds(f *testing.F) {
	for seed := range uint64(8) {
		r := rand.New(rand.NewPCG(seed, seed))
		data := make([]byte, 64+r.IntN(512))
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		f.Add(data)
	}
}

// FuzzCompute plans a canary and the active replica set of a fleet the
// fuzzer draws, one after the other as reconciles interleave, each knowing
// what the other spends, and checks that neither goes beyond the shared
// budgets, nor acts outside its own nodes, nor places two pods of its own
// on a node.
func FuzzCompute(f *testing.F) {
	f.Add([]byte{})
	// Nine nodes, then every choice in the middle of its range.
	f.Add([]byte("\x20\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80"))
	addRandomSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzFleetRound(t, data, false)
		// The same fleet rolling out with InPlaceIfPossible: the flags come
		// from a stream of their own, so the corpus replays as before.
		fuzzFleetRound(t, data, true)
	})
}

// fuzzFleetRound plans both sides of the fleet data draws, with pods
// flagged for in-place updates when inPlace is set.
func fuzzFleetRound(t *testing.T, data []byte, inPlace bool) {
	r := rand.New(newByteSource(data))
	fleet := genFuzzFleet(t, r)
	// Some nodes are in maintenance: the flags come from a stream of their
	// own, so the corpus replays as before.
	maintenance := rand.New(rand.NewPCG(uint64(len(data)), maintenanceOffset))
	for _, rs := range []string{canaryRS, activeRS} {
		for i := range fleet.sides[rs].nodes {
			fleet.sides[rs].nodes[i].Maintenance = maintenance.IntN(10) == 0
		}
	}
	if inPlace {
		flags := rand.New(rand.NewPCG(uint64(len(data)), inPlaceOffset))
		for _, rs := range []string{canaryRS, activeRS} {
			fleet.sides[rs].markInPlace(flags)
		}
	}
	order := []string{canaryRS, activeRS}
	if r.IntN(2) == 0 {
		order[0], order[1] = order[1], order[0]
	}
	for _, rs := range order {
		w := fleet.sides[rs]
		plan, errs := fleet.planSide(rs)
		after, err := apply(w, plan)
		if err != nil {
			errs = append(errs, err.Error())
		}
		if len(errs) == 0 {
			errs = checkSide(fleet, rs, plan, after)
		}
		if len(errs) > 0 {
			t.Fatalf("%s on %d nodes (%d of the other side), in place %t, params %+v:\n  %s\nplan %+v",
				rs, len(w.nodes), len(fleet.sides[other(rs)].nodes), inPlace, w.params, strings.Join(errs, "\n  "), plan)
		}
		fleet.sides[rs] = after
	}
}
