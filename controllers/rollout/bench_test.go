package rollout

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"
)

// benchSizes are a large cluster and five times that: the ratio of the two
// timings tells a linear planner from one that is not.
var benchSizes = []int{1000, 5000}

// benchParallel is the controller's default maxParallelPodCreation: it caps
// what one plan creates or replaces, as in production.
const benchParallel = 250

// surgeParams are maxSurge 10% of n as the controller resolves it when
// maxUnavailable is left unset: that defaults to 1.
func surgeParams(n int) Params {
	return Params{MaxSurge: tenPercent(n), MaxUnavailable: 1, MaxParallelPodCreation: benchParallel}
}

// benchAtSizes runs bench as one sub-benchmark per cluster size.
func benchAtSizes(b *testing.B, bench func(b *testing.B, n int)) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			bench(b, n)
		})
	}
}

// tenPercent is 10% of n rounded up, as the controller resolves
// percentages.
func tenPercent(n int) int { return (n + 9) / 10 }

// benchFleet returns n desired nodes, each running one available pod, old
// when old(i) says so, or none when old is nil. The nodes come shuffled,
// as the cache lists them in no order, so that Compute pays for its sort.
func benchFleet(params Params, n int, old func(i int) bool) Input {
	nodes := make([]Node, n)
	var pods []Pod
	for i := range nodes {
		name := fmt.Sprintf("node-%05d", i)
		nodes[i] = desired(name)
		if old == nil {
			continue
		}
		if old(i) {
			pods = append(pods, oldPod("old-"+name, name))
		} else {
			pods = append(pods, newPod("new-"+name, name))
		}
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
	return input(params, nodes, pods...)
}

// allNew and halfOld say which nodes still run an old pod.
func allNew(int) bool    { return false }
func halfOld(i int) bool { return i%2 == 1 }

// benchCompute times Compute on the input made for each size, after
// checking once that the plan does what the scenario is about.
func benchCompute(b *testing.B, build func(n int) Input, check func(n int, plan Plan) error) {
	benchAtSizes(b, func(b *testing.B, n int) {
		in := build(n)
		if err := check(n, Compute(in)); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			Compute(in)
		}
	})
}

// expectPlan says how a plan differs from the creations, deletions and
// up-to-date nodes expected, nil when it does not.
func expectPlan(plan Plan, create, del, upToDate int) error {
	if len(plan.Create) != create || len(plan.Delete) != del || plan.Counts.UpToDate != upToDate {
		return fmt.Errorf("plan creates %d, deletes %d, counts %d up to date; want %d, %d, %d",
			len(plan.Create), len(plan.Delete), plan.Counts.UpToDate, create, del, upToDate)
	}
	return nil
}

// BenchmarkComputeSteadyState is the reconcile that finds every node
// running an available new pod: the cost of looking when there is nothing
// to do, paid on every pod and node event.
func BenchmarkComputeSteadyState(b *testing.B) {
	params := Params{MaxUnavailable: 1, MaxParallelPodCreation: benchParallel}
	benchCompute(b,
		func(n int) Input { return benchFleet(params, n, allNew) },
		func(n int, plan Plan) error { return expectPlan(plan, 0, 0, n) })
}

// BenchmarkComputeRollingUpdate is a rolling update halfway through: half
// the nodes still run an old pod, and maxUnavailable 10% lets a tenth of
// them go, up to the creation cap.
func BenchmarkComputeRollingUpdate(b *testing.B) {
	benchCompute(b,
		func(n int) Input {
			return benchFleet(Params{MaxUnavailable: tenPercent(n), MaxParallelPodCreation: benchParallel}, n, halfOld)
		},
		func(n int, plan Plan) error {
			return expectPlan(plan, 0, min(tenPercent(n), benchParallel), n/2)
		})
}

// BenchmarkComputeRollingUpdateSurge is the same rolling update with
// maxSurge 10%: new pods are created beside the old ones instead.
func BenchmarkComputeRollingUpdateSurge(b *testing.B) {
	benchCompute(b,
		func(n int) Input {
			return benchFleet(surgeParams(n), n, halfOld)
		},
		func(n int, plan Plan) error {
			return expectPlan(plan, min(tenPercent(n), benchParallel), 0, n/2)
		})
}

// BenchmarkComputeCreate is a new ExtendedDaemonSet: no pod anywhere yet,
// with maxSurge 10%, which has nothing to surge over.
func BenchmarkComputeCreate(b *testing.B) {
	benchCompute(b,
		func(n int) Input {
			return benchFleet(surgeParams(n), n, nil)
		},
		func(n int, plan Plan) error {
			if plan.Counts.Unavailable != n {
				return fmt.Errorf("%d nodes unavailable, want %d", plan.Counts.Unavailable, n)
			}
			return expectPlan(plan, min(n, benchParallel), 0, 0)
		})
}

// BenchmarkComputeTopology is a sequential zone-by-zone rolling update in
// three zones, the first done and the second under way: what the domains
// add to a plan.
func BenchmarkComputeTopology(b *testing.B) {
	benchCompute(b, topologyFleet, checkTopology)
}

// topologyFleet is the cluster of BenchmarkComputeTopology: three zones,
// the first rolled out, the other two still running old pods.
func topologyFleet(n int) Input {
	zone := func(i int) int { return min(2, i/(n/3)) }
	params := Params{MaxUnavailable: tenPercent(n), MaxParallelPodCreation: benchParallel,
		Topology: &Topology{MaxUnavailable: 10, Percent: true, Sequential: true}}
	in := benchFleet(params, n, func(i int) bool { return zone(i) > 0 })
	for i := range in.Nodes {
		var id int
		if _, err := fmt.Sscanf(in.Nodes[i].Name, "node-%d", &id); err != nil {
			panic(err)
		}
		in.Nodes[i].Domain = fmt.Sprintf("zone-%d", zone(id))
	}
	return in
}

// checkTopology: the second zone's budget is spent, nothing else moves.
func checkTopology(n int, plan Plan) error {
	return expectPlan(plan, 0, min(tenPercent(n/3), benchParallel), n/3)
}

// stateSizes are the cluster sizes of BenchmarkState: a large cluster and
// the largest a cloud provider supports.
var stateSizes = []int{10_000, 100_000}

// BenchmarkState times the incremental planner at 10,000 and 100,000
// nodes in three clusters: steady state, a rolling update at
// maxUnavailable 10% halfway through, and a sequential topology rollout.
// build is the State made from scratch (every node set, then one plan);
// event is a pod turning ready or not ready on one node, then a plan: the
// cost of a watch event; build also reports the heap a State keeps per
// node beyond the pods it is given. compute is a full Compute over the same cluster,
// for comparison.
func BenchmarkState(b *testing.B) {
	scenarios := []struct {
		name  string
		build func(n int) Input
		check func(n int, plan Plan) error
	}{
		{"steady", func(n int) Input {
			return benchFleet(Params{MaxUnavailable: 1, MaxParallelPodCreation: benchParallel}, n, allNew)
		}, func(n int, plan Plan) error { return expectPlan(plan, 0, 0, n) }},
		{"rolling", func(n int) Input {
			return benchFleet(Params{MaxUnavailable: tenPercent(n), MaxParallelPodCreation: benchParallel}, n, halfOld)
		}, func(n int, plan Plan) error { return expectPlan(plan, 0, min(tenPercent(n), benchParallel), n/2) }},
		{"topology", topologyFleet, checkTopology},
	}
	for _, sc := range scenarios {
		for _, n := range stateSizes {
			in := sc.build(n)
			b.Run(fmt.Sprintf("%s/nodes=%d/build", sc.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					buildState(in).Plan(in)
				}
				b.ReportMetric(float64(keptPerNode(in)), "kept-B/node")
			})
			b.Run(fmt.Sprintf("%s/nodes=%d/event", sc.name, n), func(b *testing.B) {
				s := buildState(in)
				if err := sc.check(n, s.Plan(in)); err != nil {
					b.Fatal(err)
				}
				events := readinessEvents(in, 1000)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					e := events[i%len(events)]
					s.SetNode(e.node, e.pods[(i/len(events))%2])
					s.Plan(in)
					i++
				}
			})
			b.Run(fmt.Sprintf("%s/nodes=%d/compute", sc.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					Compute(in)
				}
			})
		}
	}
}

// keptPerNode is the heap a State built from in keeps per node, after
// garbage collection, beyond in itself.
func keptPerNode(in Input) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := buildState(in)
	s.Plan(in)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(s)
	return (after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)) / uint64(max(1, len(in.Nodes)))
}

// buildState sets every node of in in a new State.
func buildState(in Input) *State {
	s := NewState()
	for _, node := range in.Nodes {
		s.SetNode(node, in.Pods[node.Name])
	}
	return s
}

// readinessEvent is a node whose pod turns not ready (pods[1]) and back
// (pods[0]).
type readinessEvent struct {
	node Node
	pods [2][]Pod
}

// readinessEvents draws count nodes of in, each with its pods as they are
// and with its first pod not ready.
func readinessEvents(in Input, count int) []readinessEvent {
	events := make([]readinessEvent, 0, count)
	for _, node := range in.Nodes[:min(count, len(in.Nodes))] {
		pods := in.Pods[node.Name]
		notReady := slices.Clone(pods)
		notReady[0].ReadySince = time.Time{}
		events = append(events, readinessEvent{node: node, pods: [2][]Pod{pods, notReady}})
	}
	return events
}
