package rollout

import (
	"testing"
	"time"
)

// oldOn puts an available old pod named o-<node> on each node.
func oldOn(nodes ...string) []Pod {
	pods := make([]Pod, 0, len(nodes))
	for _, n := range nodes {
		pods = append(pods, oldPod("o-"+n, n))
	}
	return pods
}

// with concatenates pods.
func with(pods ...[]Pod) []Pod {
	var all []Pod
	for _, p := range pods {
		all = append(all, p...)
	}
	return all
}

func TestComputePlacement(t *testing.T) {
	params := Params{MaxUnavailable: 1, MaxParallelPodCreation: 100}
	runPlanCases(t, []planCase{
		{
			name:   "empty desired nodes get a pod, in node order",
			in:     input(params, desiredNodes("b", "a", "c"), newPod("n-c", "c")),
			create: []string{"a", "b"},
			counts: &Counts{Desired: 3, Current: 1, Ready: 1, Available: 1, UpToDate: 1, Unavailable: 2},
		},
		{
			name: "pods on a node the template no longer fits are deleted as misplaced",
			in: input(params, []Node{desired("a"), unfit("x")},
				newPod("n-a", "a"), newPod("n-x", "x"), oldPod("o-x", "x")),
			delete: []Deletion{misplaced("n-x", "x"), misplaced("o-x", "x")},
			// x runs two pods until they are gone: a surge ending.
			counts: &Counts{Desired: 1, Current: 2, Ready: 2, Available: 2, UpToDate: 1, Old: 1, Misplaced: 2, SurgeEnding: 1},
		},
		{
			name: "pods of a node that no longer exists are deleted as misplaced",
			in: input(params, []Node{desired("a"), unfit("gone")},
				newPod("n-a", "a"), oldPod("o-gone", "gone", notReady), pod("n-gone", "gone", true)),
			delete: []Deletion{misplaced("o-gone", "gone"), misplaced("n-gone", "gone")},
			counts: &Counts{Desired: 1, Current: 2, Ready: 1, Available: 1, UpToDate: 1, Old: 1, Misplaced: 2, SurgeEnding: 1},
		},
		{
			name:   "a terminating pod on an unfit node is not deleted again",
			in:     input(params, []Node{unfit("x")}, oldPod("o-x", "x", terminating)),
			counts: &Counts{},
		},
		{
			name: "a NoSchedule misfit keeps its pods and gets none",
			in: input(Params{MaxUnavailable: 3, MaxParallelPodCreation: 100},
				[]Node{misfit("m1"), misfit("m2"), misfit("m3")},
				oldPod("o-m1", "m1"), newPod("n-m3", "m3")),
			counts: &Counts{Current: 1, Ready: 1, Available: 1, Old: 1},
		},
		{
			name:   "a NoSchedule misfit's old pod is not surged either",
			in:     input(Params{MaxSurge: 2, MaxParallelPodCreation: 100}, []Node{misfit("m")}, oldPod("o-m", "m")),
			counts: &Counts{Old: 1},
		},
		{
			name:   "a surge a NoSchedule taint caught ends once its new pod is available",
			in:     input(params, []Node{misfit("m")}, oldPod("o-m", "m"), newPod("n-m", "m")),
			delete: []Deletion{surgeEnded("o-m", "m")},
			counts: &Counts{Current: 1, Ready: 1, Available: 1, Old: 1, SurgeEnding: 1},
		},
		{
			name: "a surge a NoSchedule taint caught holds its place in the surge budget until it ends",
			in: input(Params{MaxSurge: 1, MaxParallelPodCreation: 100}, []Node{misfit("m"), desired("a")},
				oldPod("o-m", "m"), pod("n-m", "m", true), oldPod("o-a", "a")),
			counts: &Counts{Desired: 1, Current: 1, Old: 2, Surging: 1},
		},
		{
			name:   "an up-to-date cluster needs nothing",
			in:     input(params, desiredNodes("a", "b"), newPod("n-a", "a"), newPod("n-b", "b")),
			counts: &Counts{Desired: 2, Current: 2, Ready: 2, Available: 2, UpToDate: 2},
		},
	})
}

func TestComputeMaxUnavailable(t *testing.T) {
	mu := func(n int) Params { return Params{MaxUnavailable: n, MaxParallelPodCreation: 100} }
	nodes := desiredNodes("a", "b", "c", "d", "e")
	runPlanCases(t, []planCase{
		{
			name:   "maxUnavailable 1 replaces one old pod",
			in:     input(mu(1), nodes, oldOn("a", "b", "c", "d", "e")...),
			delete: []Deletion{replaced("o-a", "a")},
			counts: &Counts{Desired: 5, Old: 5},
		},
		{
			name:   "maxUnavailable 2 replaces two old pods, in node order",
			in:     input(mu(2), nodes, oldOn("e", "d", "c", "b", "a")...),
			delete: []Deletion{replaced("o-a", "a"), replaced("o-b", "b")},
		},
		{
			name: "maxUnavailable above the node count replaces every old pod",
			in:   input(mu(10), nodes, oldOn("a", "b", "c", "d", "e")...),
			delete: []Deletion{replaced("o-a", "a"), replaced("o-b", "b"), replaced("o-c", "c"),
				replaced("o-d", "d"), replaced("o-e", "e")},
		},
		{
			name:   "an empty node uses the budget",
			in:     input(mu(2), nodes, oldOn("b", "c", "d", "e")...),
			create: []string{"a"},
			delete: []Deletion{replaced("o-b", "b")},
			counts: &Counts{Desired: 5, Old: 4, Unavailable: 1},
		},
		{
			name:   "a new pod not yet ready uses the budget",
			in:     input(mu(2), nodes, with([]Pod{pod("n-a", "a", true)}, oldOn("b", "c", "d", "e"))...),
			delete: []Deletion{replaced("o-b", "b")},
			counts: &Counts{Desired: 5, Current: 1, Old: 4, Unavailable: 1},
		},
		{
			name:   "at maxUnavailable nothing available is deleted",
			in:     input(mu(2), nodes, with([]Pod{pod("n-b", "b", true)}, oldOn("c", "d", "e"))...),
			create: []string{"a"},
			counts: &Counts{Desired: 5, Current: 1, Old: 3, Unavailable: 2},
		},
		{
			name:   "above maxUnavailable nothing available is deleted",
			in:     input(mu(1), nodes, oldOn("c", "d", "e")...),
			create: []string{"a", "b"},
			counts: &Counts{Desired: 5, Old: 3, Unavailable: 2},
		},
		{
			name: "unavailable old pods are replaced without using the budget",
			in: input(mu(1), nodes, with([]Pod{oldPod("o-a", "a", notReady), oldPod("o-b", "b", notReady)},
				oldOn("c", "d", "e"))...),
			delete: []Deletion{replaced("o-a", "a"), replaced("o-b", "b")},
			counts: &Counts{Desired: 5, Old: 5, Unavailable: 2},
		},
		{
			name:   "unavailable old pods are replaced, then the budget replaces available ones",
			in:     input(mu(2), nodes, with([]Pod{oldPod("o-a", "a", notReady)}, oldOn("b", "c", "d", "e"))...),
			delete: []Deletion{replaced("o-a", "a"), replaced("o-b", "b")},
			counts: &Counts{Desired: 5, Old: 5, Unavailable: 1},
		},
		{
			name: "an old pod beside a new pod not yet ready is kept; other nodes are still replaced",
			in: input(mu(1), desiredNodes("a", "b"),
				oldPod("o-a", "a"), pod("n-a", "a", true), oldPod("o-b", "b")),
			delete: []Deletion{replaced("o-b", "b")},
			counts: &Counts{Desired: 2, Current: 1, Old: 2, Surging: 1},
		},
	})
}

func TestComputeMaxSurge(t *testing.T) {
	ms := func(n int) Params { return Params{MaxSurge: n, MaxParallelPodCreation: 100} }
	runPlanCases(t, []planCase{
		{
			name:   "maxSurge 1 creates one new pod beside an old one",
			in:     input(ms(1), desiredNodes("a", "b", "c"), oldOn("a", "b", "c")...),
			create: []string{"a"},
			counts: &Counts{Desired: 3, Old: 3},
		},
		{
			name:   "maxSurge 2 surges two nodes",
			in:     input(ms(2), desiredNodes("a", "b", "c"), oldOn("a", "b", "c")...),
			create: []string{"a", "b"},
		},
		{
			name: "surges in flight use the budget",
			in: input(ms(2), desiredNodes("a", "b", "c", "d"),
				with([]Pod{pod("n-a", "a", true)}, oldOn("a", "b", "c", "d"))...),
			create: []string{"b"},
			counts: &Counts{Desired: 4, Current: 1, Old: 4, Surging: 1},
		},
		{
			name: "at maxSurge nothing is created and nothing available is deleted",
			in: input(Params{MaxSurge: 1, MaxUnavailable: 2, MaxParallelPodCreation: 100}, desiredNodes("a", "b"),
				with([]Pod{pod("n-a", "a", true)}, oldOn("a", "b"))...),
			counts: &Counts{Desired: 2, Current: 1, Old: 2, Surging: 1},
		},
		{
			name: "the old pod is deleted once the new pod beside it is available",
			in: input(ms(1), desiredNodes("a", "b"),
				with([]Pod{newPod("n-a", "a")}, oldOn("a", "b"))...),
			create: []string{"b"},
			delete: []Deletion{surgeEnded("o-a", "a")},
			counts: &Counts{Desired: 2, Current: 1, Ready: 1, Available: 1, UpToDate: 1, Old: 2, SurgeEnding: 1},
		},
		{
			// A node going down (its pods marked not ready) mid-surge, or
			// a canary that let its node go before its pod ran there: were
			// both pods kept, the node would still hold two agents when it
			// returns, after the grace that left it alone and out of the
			// surge budget while the budget went to another node.
			name: "an unavailable old pod beside a new pod not yet available is deleted: the surge ends",
			in: input(ms(1), desiredNodes("a", "b"),
				pod("n-a", "a", true), oldPod("o-a", "a", notReady), oldPod("o-b", "b")),
			create: []string{"b"},
			delete: []Deletion{replaced("o-a", "a")},
			counts: &Counts{Desired: 2, Current: 1, Old: 2, Unavailable: 1, SurgeEnding: 1},
		},
		{
			name: "the same on a NoSchedule misfit",
			in: input(ms(1), []Node{misfit("a"), desired("b")},
				pod("n-a", "a", true), oldPod("o-a", "a", notReady), oldPod("o-b", "b")),
			create: []string{"b"},
			delete: []Deletion{replaced("o-a", "a")},
			counts: &Counts{Desired: 1, Current: 1, Old: 2, SurgeEnding: 1},
		},
		{
			name: "an unavailable old pod is deleted, not surged",
			in: input(ms(1), desiredNodes("a", "b"),
				oldPod("o-a", "a", notReady), oldPod("o-b", "b")),
			create: []string{"b"},
			delete: []Deletion{replaced("o-a", "a")},
			counts: &Counts{Desired: 2, Old: 2, Unavailable: 1},
		},
		{
			name:   "empty nodes get a pod before surges",
			in:     input(ms(1), desiredNodes("a", "b"), oldOn("a")...),
			create: []string{"b", "a"},
			counts: &Counts{Desired: 2, Old: 1, Unavailable: 1},
		},
		{
			name:   "maxUnavailable deletes nothing in surge mode",
			in:     input(Params{MaxSurge: 1, MaxUnavailable: 3, MaxParallelPodCreation: 100}, desiredNodes("a", "b", "c"), oldOn("a", "b", "c")...),
			create: []string{"a"},
		},
		{
			// A canary that took a node mid-surge, or a template abandoned
			// mid-surge: two agents on a node, neither of this replica
			// set. The node surges until the duplicate is gone: it gets no
			// third pod, and the other replica set sees it spend the
			// surge budget (Spent).
			name: "two old pods on a node are a surge that ends with this plan, not a node to surge",
			in: input(ms(1), desiredNodes("a", "b"),
				oldPod("o1-a", "a", createdAgo(2*time.Hour)), oldPod("o2-a", "a"), oldPod("o-b", "b")),
			create: []string{"b"},
			delete: []Deletion{duplicate("o2-a", "a")},
			counts: &Counts{Desired: 2, Old: 3, SurgeEnding: 1},
		},
		{
			name: "a node with a pod still terminating is not surged",
			in: input(ms(1), desiredNodes("a", "b"),
				with([]Pod{oldPod("t-a", "a", terminating)}, oldOn("a", "b"))...),
			create: []string{"b"},
			counts: &Counts{Desired: 2, Old: 2},
		},
	})
}

func TestComputeMinReady(t *testing.T) {
	params := Params{MaxUnavailable: 1, MaxParallelPodCreation: 100, MinReady: 30 * time.Second}
	runPlanCases(t, []planCase{
		{
			name:    "a pod ready for less than minReady is not available; look again when it is",
			in:      input(params, desiredNodes("a"), newPod("n-a", "a", readyFor(10*time.Second))),
			requeue: 20 * time.Second,
			counts:  &Counts{Desired: 1, Current: 1, Ready: 1, Unavailable: 1},
		},
		{
			name:   "a pod ready for exactly minReady is available",
			in:     input(params, desiredNodes("a"), newPod("n-a", "a", readyFor(30*time.Second))),
			counts: &Counts{Desired: 1, Current: 1, Ready: 1, Available: 1, UpToDate: 1},
		},
		{
			name: "the nearest availability sets the requeue",
			in: input(params, desiredNodes("a", "b"),
				newPod("n-a", "a", readyFor(10*time.Second)), newPod("n-b", "b", readyFor(25*time.Second))),
			requeue: 5 * time.Second,
			counts:  &Counts{Desired: 2, Current: 2, Ready: 2, Unavailable: 2},
		},
		{
			name: "a pod not yet available holds the budget",
			in: input(params, desiredNodes("a", "b"),
				newPod("n-a", "a", readyFor(10*time.Second)), oldPod("o-b", "b")),
			requeue: 20 * time.Second,
			counts:  &Counts{Desired: 2, Current: 1, Ready: 1, Old: 1, Unavailable: 1},
		},
		{
			name: "a surge ends only once the new pod is available",
			in: input(Params{MaxSurge: 1, MaxParallelPodCreation: 100, MinReady: 30 * time.Second}, desiredNodes("a"),
				oldPod("o-a", "a"), newPod("n-a", "a", readyFor(10*time.Second))),
			requeue: 20 * time.Second,
			counts:  &Counts{Desired: 1, Current: 1, Ready: 1, Old: 1, Surging: 1},
		},
		{
			name: "an old pod ready for less than minReady is replaced without using the budget",
			in: input(params, desiredNodes("a", "b"),
				newPod("n-a", "a", readyFor(10*time.Second)), oldPod("o-b", "b", readyFor(5*time.Second))),
			delete:  []Deletion{replaced("o-b", "b")},
			requeue: 20 * time.Second,
			counts:  &Counts{Desired: 2, Current: 1, Ready: 1, Old: 1, Unavailable: 2},
		},
	})
}

func TestComputeSlowStart(t *testing.T) {
	capped := func(n int) Params { return Params{MaxUnavailable: 10, MaxParallelPodCreation: n} }
	additive := func(increase int, started time.Duration) Params {
		return Params{
			MaxUnavailable:         10,
			MaxParallelPodCreation: 10,
			SlowStartInterval:      time.Minute,
			SlowStartIncrease:      increase,
			StartedAt:              now.Add(-started),
		}
	}
	eight := desiredNodes("a", "b", "c", "d", "e", "f", "g", "h")
	runPlanCases(t, []planCase{
		{
			name:   "MaxParallelPodCreation caps creations",
			in:     input(capped(2), desiredNodes("a", "b", "c", "d", "e")),
			create: []string{"a", "b"},
		},
		{
			name: "new pods not yet ready count against the cap",
			in: input(capped(3), desiredNodes("a", "b", "c", "d", "e", "f"),
				pod("n-a", "a", true), newPod("n-b", "b")),
			create: []string{"c", "d"},
		},
		{
			name:   "unschedulable new pods count against the cap",
			in:     input(capped(2), desiredNodes("a", "b", "c", "d"), pod("n-a", "a", true, unschedulable)),
			create: []string{"b"},
		},
		{
			name:   "with the cap reached nothing is created",
			in:     input(capped(1), desiredNodes("a", "b", "c"), pod("n-a", "a", true)),
			counts: &Counts{Desired: 3, Current: 1, Unavailable: 3},
		},
		{
			name:   "MaxParallelPodCreation 0 creates one pod at a time",
			in:     input(capped(0), desiredNodes("a", "b")),
			create: []string{"a"},
		},
		{
			name:   "replacements share the cap with creations, empty nodes first",
			in:     input(capped(2), desiredNodes("a", "b", "c", "d", "e"), oldOn("b", "c", "d", "e")...),
			create: []string{"a"},
			delete: []Deletion{replaced("o-b", "b")},
		},
		{
			name:    "additive: the first interval allows SlowStartIncrease pods; look again at the next interval",
			in:      input(additive(2, 30*time.Second), eight),
			create:  []string{"a", "b"},
			requeue: 30 * time.Second,
		},
		{
			name:    "additive: the third interval allows three increases",
			in:      input(additive(2, 150*time.Second), eight),
			create:  []string{"a", "b", "c", "d", "e", "f"},
			requeue: 30 * time.Second,
		},
		{
			name:   "additive: grown past MaxParallelPodCreation, the cap is MaxParallelPodCreation and no requeue",
			in:     input(additive(2, time.Hour), desiredNodes("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l")),
			create: []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"},
		},
		{
			name:    "additive: pods in flight count against the grown cap",
			in:      input(additive(2, 90*time.Second), eight, pod("n-a", "a", true)),
			create:  []string{"b", "c", "d"},
			requeue: 30 * time.Second,
		},
		{
			name:    "additive: SlowStartIncrease 0 grows by one",
			in:      input(additive(0, 61*time.Second), eight),
			create:  []string{"a", "b"},
			requeue: 59 * time.Second,
		},
	})
}

func TestComputeMaxPodSchedulerFailure(t *testing.T) {
	mpsf := func(n int) Params {
		return Params{MaxUnavailable: 1, MaxPodSchedulerFailure: n, MaxParallelPodCreation: 100}
	}
	nodes := desiredNodes("a", "b", "c")
	runPlanCases(t, []planCase{
		{
			name:   "an unschedulable new pod counts as unavailable by default",
			in:     input(mpsf(0), nodes, with([]Pod{pod("n-a", "a", true, unschedulable)}, oldOn("b", "c"))...),
			counts: &Counts{Desired: 3, Current: 1, Old: 2, Unavailable: 1, Unschedulable: 1},
		},
		{
			name:   "within MaxPodSchedulerFailure it does not count",
			in:     input(mpsf(1), nodes, with([]Pod{pod("n-a", "a", true, unschedulable)}, oldOn("b", "c"))...),
			delete: []Deletion{replaced("o-b", "b")},
			counts: &Counts{Desired: 3, Current: 1, Old: 2, Unschedulable: 1, Excused: 1},
		},
		{
			name: "the other replica set's scheduler failures share the allowance",
			in: func() Input {
				in := input(mpsf(1), nodes, with([]Pod{pod("n-a", "a", true, unschedulable)}, oldOn("b", "c"))...)
				in.Elsewhere.Excused = 1
				return in
			}(),
			counts: &Counts{Desired: 3, Current: 1, Old: 2, Unavailable: 1, Unschedulable: 1},
		},
		{
			name: "beyond MaxPodSchedulerFailure the excess counts",
			in: input(mpsf(1), nodes,
				pod("n-a", "a", true, unschedulable), pod("n-b", "b", true, unschedulable), oldPod("o-c", "c")),
			counts: &Counts{Desired: 3, Current: 2, Old: 1, Unavailable: 1, Unschedulable: 2, Excused: 1},
		},
		{
			name: "an unschedulable pod beside an available old pod is no allowance",
			in: input(mpsf(1), nodes,
				pod("n-a", "a", true), oldPod("o-b", "b"), pod("n-b", "b", true, unschedulable), oldPod("o-c", "c")),
			counts: &Counts{Desired: 3, Current: 2, Old: 2, Unavailable: 1, Unschedulable: 1, Surging: 1},
		},
		{
			name: "an unschedulable pod on a node being left is no allowance",
			in: input(mpsf(1), []Node{desired("a"), desired("c"), unfit("x")},
				pod("n-a", "a", true), pod("n-x", "x", true, unschedulable), oldPod("o-c", "c")),
			delete: []Deletion{misplaced("n-x", "x")},
			counts: &Counts{Desired: 2, Current: 2, Old: 1, Unavailable: 1, Unschedulable: 1, Misplaced: 1},
		},
	})
}

func TestComputePausedAndFrozen(t *testing.T) {
	paused := Params{MaxUnavailable: 5, MaxParallelPodCreation: 100, Paused: true}
	pausedSurge := Params{MaxSurge: 2, MaxParallelPodCreation: 100, Paused: true}
	frozen := Params{MaxUnavailable: 5, MaxParallelPodCreation: 100, Frozen: true}
	runPlanCases(t, []planCase{
		{
			name:   "paused: old pods are not replaced",
			in:     input(paused, desiredNodes("a", "b"), oldOn("a", "b")...),
			counts: &Counts{Desired: 2, Old: 2},
		},
		{
			name:   "paused: an unavailable old pod is not replaced",
			in:     input(paused, desiredNodes("a"), oldPod("o-a", "a", notReady)),
			counts: &Counts{Desired: 1, Old: 1, Unavailable: 1},
		},
		{
			name:   "paused: empty nodes still get a pod",
			in:     input(paused, desiredNodes("a", "b"), oldOn("b")...),
			create: []string{"a"},
		},
		{
			name: "paused: no new surge starts",
			in:   input(pausedSurge, desiredNodes("a"), oldOn("a")...),
		},
		{
			name: "paused: a surge whose new pod is available still ends",
			in: input(pausedSurge, desiredNodes("a", "b"),
				with([]Pod{newPod("n-a", "a")}, oldOn("a", "b"))...),
			delete: []Deletion{surgeEnded("o-a", "a")},
		},
		{
			name:   "paused: misplaced pods are still deleted",
			in:     input(paused, []Node{unfit("x")}, oldOn("x")...),
			delete: []Deletion{misplaced("o-x", "x")},
		},
		{
			name: "frozen: nothing is created or deleted, counts are still computed",
			in: input(frozen, []Node{desired("a"), desired("b"), desired("d"), desired("e"), unfit("x")},
				oldPod("o-b", "b"), pod("n-d", "d", true, failed), newPod("n-e", "e"), newPod("n-e2", "e"),
				oldPod("o-x", "x")),
			// e runs two pods: a surge, seen from the other replica set.
			counts: &Counts{Desired: 4, Current: 3, Ready: 2, Available: 2, UpToDate: 1, Old: 2, Unavailable: 2, Misplaced: 1, SurgeEnding: 1},
		},
	})
}

func TestComputeDuplicatesFailedAndTerminating(t *testing.T) {
	params := Params{MaxUnavailable: 1, MaxParallelPodCreation: 100, MinReady: 30 * time.Second}
	a := desiredNodes("a")
	runPlanCases(t, []planCase{
		{
			name: "duplicates: the available pod is kept over a ready one",
			in: input(params, a,
				newPod("n1", "a", readyFor(10*time.Second), createdAgo(2*time.Hour)), newPod("n2", "a")),
			delete: []Deletion{duplicate("n1", "a")},
			// The duplicate would become available in 20s; Available counts it.
			requeue: 20 * time.Second,
			counts:  &Counts{Desired: 1, Current: 2, Ready: 2, Available: 1, UpToDate: 1, SurgeEnding: 1},
		},
		{
			name: "duplicates: the ready pod is kept over one not ready",
			in: input(params, a,
				pod("n1", "a", true, createdAgo(2*time.Hour)), newPod("n2", "a", readyFor(time.Second))),
			delete:  []Deletion{duplicate("n1", "a")},
			requeue: 29 * time.Second,
		},
		{
			name: "duplicates: the scheduled pod is kept over an unschedulable one",
			in: input(params, a,
				pod("n1", "a", true, unschedulable, createdAgo(2*time.Hour)), pod("n2", "a", true)),
			delete: []Deletion{duplicate("n1", "a")},
		},
		{
			name:   "duplicates: the older pod is kept when both are as good",
			in:     input(params, a, newPod("n1", "a"), newPod("n2", "a", createdAgo(2*time.Hour))),
			delete: []Deletion{duplicate("n1", "a")},
		},
		{
			name:   "duplicates: the name breaks ties",
			in:     input(params, a, newPod("n-b", "a"), newPod("n-a", "a")),
			delete: []Deletion{duplicate("n-b", "a")},
		},
		{
			name: "duplicates: of three pods one is kept",
			in: input(params, a,
				pod("n1", "a", true), newPod("n2", "a"), pod("n3", "a", true, unschedulable)),
			delete: []Deletion{duplicate("n1", "a"), duplicate("n3", "a")},
		},
		{
			name: "duplicates: of two old pods one is kept",
			in: input(params, desiredNodes("a", "b"),
				oldPod("o1", "a", createdAgo(2*time.Hour)), oldPod("o2", "a")),
			create: []string{"b"},
			delete: []Deletion{duplicate("o2", "a")},
		},
		{
			name:   "failed: without backoff the pod is deleted, its node reported and left empty this step",
			in:     input(params, a, pod("n-a", "a", true, failed)),
			delete: []Deletion{failedDeletion("n-a", "a")},
			failed: []string{"a"},
			counts: &Counts{Desired: 1, Current: 1, Unavailable: 1},
		},
		{
			name:   "failed: once the backoff has ended the pod is deleted",
			in:     withBackoff(input(params, a, pod("n-a", "a", true, failed)), "a", now.Add(-time.Second)),
			delete: []Deletion{failedDeletion("n-a", "a")},
			failed: []string{"a"},
		},
		{
			name:    "failed: during the backoff the pod is left alone; look again when it ends",
			in:      withBackoff(input(params, a, pod("n-a", "a", true, failed)), "a", now.Add(45*time.Second)),
			requeue: 45 * time.Second,
			counts:  &Counts{Desired: 1, Current: 1, Unavailable: 1},
		},
		{
			name:   "failed: an old failed pod is deleted too",
			in:     input(params, a, pod("o-a", "a", false, failed)),
			delete: []Deletion{failedDeletion("o-a", "a")},
			failed: []string{"a"},
			counts: &Counts{Desired: 1, Unavailable: 1},
		},
		{
			name: "failed: backoff on another node does not hold this one",
			in: withBackoff(input(params, desiredNodes("a", "b"), pod("n-a", "a", true, failed), pod("n-b", "b", true, failed)),
				"b", now.Add(time.Minute)),
			delete:  []Deletion{failedDeletion("n-a", "a")},
			failed:  []string{"a"},
			requeue: time.Minute,
		},
		{
			name: "failed: a failed pod beside a live pod of its kind is a duplicate, deleted despite the backoff",
			in: withBackoff(input(params, a, pod("n1", "a", true, failed, createdAgo(2*time.Hour)), newPod("n2", "a")),
				"a", now.Add(time.Minute)),
			delete: []Deletion{duplicate("n1", "a")},
			// The node holds two pods until the duplicate is gone.
			counts: &Counts{Desired: 1, Current: 2, Ready: 1, Available: 1, UpToDate: 1, SurgeEnding: 1},
		},
		{
			name: "failed: duplicates on a node whose failed pod is deleted are deleted too",
			in: input(params, a,
				pod("o-a", "a", false, failed), newPod("n1", "a"), newPod("n2", "a", createdAgo(2*time.Hour))),
			delete: []Deletion{failedDeletion("o-a", "a"), duplicate("n1", "a")},
			failed: []string{"a"},
		},
		{
			name: "failed: an old pod beside a failed new pod keeps its node available",
			in: input(params, desiredNodes("a", "b"),
				oldPod("o-a", "a"), pod("n-a", "a", true, failed), oldPod("o-b", "b")),
			delete: []Deletion{failedDeletion("n-a", "a"), replaced("o-b", "b")},
			failed: []string{"a"},
			counts: &Counts{Desired: 2, Current: 1, Old: 2, SurgeEnding: 1},
		},
		{
			name: "failed: a failed new pod in backoff beside an old pod holds its place in the surge budget",
			in: withBackoff(input(Params{MaxSurge: 1, MaxParallelPodCreation: 100}, desiredNodes("a", "b"),
				oldPod("o-a", "a"), pod("n-a", "a", true, failed), oldPod("o-b", "b")),
				"a", now.Add(time.Minute)),
			requeue: time.Minute,
			counts:  &Counts{Desired: 2, Current: 1, Old: 2, Surging: 1},
		},
		{
			name:   "failed: a failed pod on an unfit node is deleted as misplaced",
			in:     input(params, []Node{unfit("x")}, pod("n-x", "x", true, failed)),
			delete: []Deletion{misplaced("n-x", "x")},
		},
		{
			name:   "terminating: a node whose only pod is terminating gets no new pod yet",
			in:     input(params, a, oldPod("o-a", "a", terminating)),
			counts: &Counts{Desired: 1, Unavailable: 1},
		},
		{
			name:   "terminating: a terminating pod beside an available new pod is ignored",
			in:     input(params, a, newPod("n-a", "a"), oldPod("o-a", "a", terminating)),
			counts: &Counts{Desired: 1, Current: 1, Ready: 1, Available: 1, UpToDate: 1},
		},
		{
			name:   "terminating: terminating pods are not counted",
			in:     input(params, desiredNodes("a", "b"), newPod("n-a", "a", terminating)),
			create: []string{"b"},
			counts: &Counts{Desired: 2, Unavailable: 2},
		},
	})
}

func TestComputeSharedBudgetsAndUnresponsiveNodes(t *testing.T) {
	mu := func(n int) Params { return Params{MaxUnavailable: n, MaxParallelPodCreation: 100} }
	ms := func(n int) Params { return Params{MaxSurge: n, MaxParallelPodCreation: 100} }
	elsewhere := func(in Input, spent Spent) Input { in.Elsewhere = spent; return in }
	unresponsive := func(name string) Node { n := desired(name); n.Unresponsive = true; return n }
	nodes := desiredNodes("a", "b", "c")
	runPlanCases(t, []planCase{
		{
			name:   "nodes down elsewhere use the unavailability budget",
			in:     elsewhere(input(mu(2), nodes, oldOn("a", "b", "c")...), Spent{Unavailable: 1}),
			delete: []Deletion{replaced("o-a", "a")},
		},
		{
			name: "nothing is replaced while the other replica set spends the whole budget",
			in:   elsewhere(input(mu(1), nodes, oldOn("a", "b", "c")...), Spent{Unavailable: 1}),
		},
		{
			name:   "surges elsewhere use the surge budget",
			in:     elsewhere(input(ms(2), nodes, oldOn("a", "b", "c")...), Spent{Surging: 1}),
			create: []string{"a"},
		},
		{
			name:   "an unresponsive node is left alone and costs nothing",
			in:     input(mu(1), []Node{unresponsive("a"), desired("b")}, oldPod("o-a", "a", terminating), oldPod("o-b", "b")),
			delete: []Deletion{replaced("o-b", "b")},
			counts: &Counts{Old: 1, Desired: 1, IgnoredUnresponsive: 1},
		},
	})
}

// Every node holding two pods that are not terminating spends the surge
// budget, whichever replica sets they belong to: seen by the other replica
// set (a frozen plan, as spentElsewhere makes), a node with two agents
// outside this replica set's own surges would otherwise read as none, and
// the other one would surge on a node of its own, past maxSurge.
func TestSpentCountsEveryNodeWithTwoPods(t *testing.T) {
	for _, tc := range []struct {
		name string
		node Node
		pods []Pod
	}{
		{"two pods of other replica sets", desired("a"), []Pod{oldPod("o1-a", "a"), oldPod("o2-a", "a", createdAgo(2*time.Hour))}},
		{"two pods of this replica set", desired("a"), []Pod{newPod("n1-a", "a"), newPod("n2-a", "a", createdAgo(2*time.Hour))}},
		{"an old and a new pod", desired("a"), []Pod{oldPod("o-a", "a"), pod("n-a", "a", true)}},
		{"an old and an available new pod", desired("a"), []Pod{oldPod("o-a", "a"), newPod("n-a", "a")}},
		{"a failed pod beside a live one", desired("a"), []Pod{oldPod("o-a", "a"), pod("n-a", "a", true, failed)}},
		{"a NoSchedule misfit", misfit("a"), []Pod{oldPod("o1-a", "a"), oldPod("o2-a", "a", createdAgo(2*time.Hour))}},
		{"a node the template no longer fits", unfit("a"), []Pod{oldPod("o-a", "a"), newPod("n-a", "a")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := input(Params{MaxSurge: 1, MaxParallelPodCreation: 100, Frozen: true}, []Node{tc.node}, tc.pods...)
			if got := Compute(in).Counts.Spent().Surging; got != 1 {
				t.Fatalf("Spent().Surging = %d, want 1: the node runs two agents", got)
			}
			// One of them terminating, the node runs one.
			in.Pods["a"][1].Terminating = true
			if got := Compute(in).Counts.Spent().Surging; got != 0 {
				t.Fatalf("with one pod terminating, Spent().Surging = %d, want 0", got)
			}
		})
	}
}
