package rollout

import (
	"testing"
	"time"
)

func inPlace(p *Pod)  { p.InPlace = true }
func updating(p *Pod) { p.Updating = true }
func draining(p *Pod) { p.Draining = true; p.GateClosed = true }

// gateClosed is an old pod whose gate was closed for its update and that
// the kubelet has taken out of service.
func gateClosed(p *Pod) { p.GateClosed = true; p.ReadySince = time.Time{} }

// inPlaceOn puts an available old pod named o-<node>, updatable in place,
// on each node.
func inPlaceOn(nodes ...string) []Pod {
	pods := make([]Pod, 0, len(nodes))
	for _, n := range nodes {
		pods = append(pods, oldPod("o-"+n, n, inPlace))
	}
	return pods
}

func updated(pod, node string) InPlaceUpdate { return InPlaceUpdate{Pod: pod, Node: node} }

func withElsewhere(in Input, spent Spent) Input {
	in.Elsewhere = spent
	return in
}

func TestComputeInPlace(t *testing.T) {
	params := Params{MaxUnavailable: 2, MaxParallelPodCreation: 100}
	runPlanCases(t, []planCase{
		{
			name:   "old pods flagged in place are updated, not deleted, under maxUnavailable",
			in:     input(params, desiredNodes("a", "b", "c"), inPlaceOn("a", "b", "c")...),
			update: []InPlaceUpdate{updated("o-a", "a"), updated("o-b", "b")},
			counts: &Counts{Desired: 3, Old: 3},
		},
		{
			name: "old pods not flagged are deleted as before",
			in:   input(params, desiredNodes("a", "b", "c"), oldOn("a", "b", "c")...),
			delete: []Deletion{
				replaced("o-a", "a"), replaced("o-b", "b"),
			},
			counts: &Counts{Desired: 3, Old: 3},
		},
		{
			name: "in-place and recreated nodes share one maxUnavailable",
			in: input(params, desiredNodes("a", "b", "c", "d"),
				oldPod("o-a", "a"), oldPod("o-b", "b", inPlace), oldPod("o-c", "c"), oldPod("o-d", "d", inPlace)),
			delete: []Deletion{replaced("o-a", "a")},
			update: []InPlaceUpdate{updated("o-b", "b")},
			counts: &Counts{Desired: 4, Old: 4},
		},
		{
			name: "a pod mid-update is unavailable and holds the budget",
			in: input(params, desiredNodes("a", "b", "c"),
				newPod("o-a", "a", updating), oldPod("o-b", "b", inPlace), oldPod("o-c", "c", inPlace)),
			update: []InPlaceUpdate{updated("o-b", "b")},
			counts: &Counts{Desired: 3, Current: 1, Updating: 1, Old: 2, Unavailable: 1},
		},
		{
			name: "two pods mid-update spend all of maxUnavailable",
			in: input(params, desiredNodes("a", "b", "c"),
				newPod("o-a", "a", updating), newPod("o-b", "b", updating), oldPod("o-c", "c", inPlace)),
			counts: &Counts{Desired: 3, Current: 2, Updating: 2, Old: 1, Unavailable: 2},
		},
		{
			name: "a pod whose update finished is available after minReadySeconds",
			in: input(Params{MaxUnavailable: 1, MaxParallelPodCreation: 100, MinReady: time.Minute}, desiredNodes("a", "b"),
				newPod("o-a", "a", readyFor(20*time.Second)), oldPod("o-b", "b", inPlace)),
			requeue: 40 * time.Second,
			counts:  &Counts{Desired: 2, Current: 1, Ready: 1, Old: 1, Unavailable: 1},
		},
		{
			name: "an old pod draining behind its readiness gate is unavailable and waits",
			in: input(Params{MaxUnavailable: 1, MaxParallelPodCreation: 100}, desiredNodes("a", "b"),
				oldPod("o-a", "a", inPlace, draining), oldPod("o-b", "b", inPlace)),
			counts: &Counts{Desired: 2, Old: 2, Unavailable: 1},
		},
		{
			name: "once drained it is updated, at no further cost",
			in: input(Params{MaxUnavailable: 1, MaxParallelPodCreation: 100}, desiredNodes("a", "b"),
				oldPod("o-a", "a", inPlace, notReady), oldPod("o-b", "b", inPlace)),
			update: []InPlaceUpdate{updated("o-a", "a")},
			counts: &Counts{Desired: 2, Old: 2, Unavailable: 1},
		},
		{
			name:   "the unavailability spent elsewhere counts",
			in:     withElsewhere(input(params, desiredNodes("a", "b"), inPlaceOn("a", "b")...), Spent{Unavailable: 1}),
			update: []InPlaceUpdate{updated("o-a", "a")},
			counts: &Counts{Desired: 2, Old: 2},
		},
		{
			name: "in-place pods take maxUnavailable, the others surge",
			in: input(Params{MaxUnavailable: 1, MaxSurge: 1, MaxParallelPodCreation: 100}, desiredNodes("a", "b", "c", "d"),
				oldPod("o-a", "a"), oldPod("o-b", "b", inPlace), oldPod("o-c", "c"), oldPod("o-d", "d", inPlace)),
			create: []string{"a"},
			update: []InPlaceUpdate{updated("o-b", "b")},
			counts: &Counts{Desired: 4, Old: 4},
		},
		{
			name: "with maxUnavailable 0 in-place pods are surged",
			in: input(Params{MaxSurge: 1, MaxParallelPodCreation: 100}, desiredNodes("a", "b"),
				inPlaceOn("a", "b")...),
			create: []string{"a"},
			counts: &Counts{Desired: 2, Old: 2},
		},
		{
			name: "a node the template no longer fits has its pod deleted, not updated",
			in: input(params, []Node{desired("a"), unfit("x")},
				oldPod("o-a", "a", inPlace), oldPod("o-x", "x", inPlace)),
			delete: []Deletion{misplaced("o-x", "x")},
			update: []InPlaceUpdate{updated("o-a", "a")},
			counts: &Counts{Desired: 1, Old: 2, Misplaced: 1},
		},
		{
			name:   "slow start caps in-place updates as it caps creations",
			in:     input(Params{MaxUnavailable: 3, MaxParallelPodCreation: 2}, desiredNodes("a", "b", "c", "d"), with([]Pod{newPod("o-a", "a", updating)}, inPlaceOn("b", "c", "d"))...),
			update: []InPlaceUpdate{updated("o-b", "b")},
			counts: &Counts{Desired: 4, Current: 1, Updating: 1, Old: 3, Unavailable: 1},
		},
		{
			name:   "paused: nothing is updated",
			in:     input(Params{MaxUnavailable: 2, MaxParallelPodCreation: 100, Paused: true}, desiredNodes("a", "b"), inPlaceOn("a", "b")...),
			counts: &Counts{Desired: 2, Old: 2},
		},
		{
			name: "frozen: nothing is updated, not even an unavailable pod",
			in: input(Params{MaxUnavailable: 2, MaxParallelPodCreation: 100, Frozen: true}, desiredNodes("a", "b"),
				oldPod("o-a", "a", inPlace, notReady), oldPod("o-b", "b", inPlace)),
			counts: &Counts{Desired: 2, Old: 2, Unavailable: 1},
		},
	})
}

// A pod whose gate was closed for its update serves again when the update
// does not go on: the rollout is paused or frozen, or its domain's turn is
// not (or no longer) now, or its node takes no new pod. One the update
// merely waits for (the kubelet, slow start) stays out of service.
func TestComputeReopensGates(t *testing.T) {
	params := Params{MaxUnavailable: 1, MaxParallelPodCreation: 100}
	paused, frozen := params, params
	paused.Paused, frozen.Frozen = true, true
	runPlanCases(t, []planCase{
		{
			name:   "paused: a pod draining for its update serves again",
			in:     input(paused, desiredNodes("a", "b"), oldPod("o-a", "a", inPlace, draining), oldPod("o-b", "b", inPlace)),
			reopen: []string{"o-a"},
			counts: &Counts{Desired: 2, Old: 2, Unavailable: 1},
		},
		{
			name:   "paused: a drained pod serves again",
			in:     input(paused, desiredNodes("a", "b"), oldPod("o-a", "a", inPlace, gateClosed), oldPod("o-b", "b", inPlace)),
			reopen: []string{"o-a"},
			counts: &Counts{Desired: 2, Old: 2, Unavailable: 1},
		},
		{
			name:   "frozen: a draining pod serves again",
			in:     input(frozen, desiredNodes("a", "b"), oldPod("o-a", "a", inPlace, draining), oldPod("o-b", "b", inPlace)),
			reopen: []string{"o-a"},
			counts: &Counts{Desired: 2, Old: 2, Unavailable: 1},
		},
		{
			name:   "not its domain's turn: a draining pod serves again",
			in:     twoZones(zoned1(true, 0), oldPod("o-b1", "b1", inPlace, draining)),
			delete: []Deletion{replaced("old-a1", "a1")},
			reopen: []string{"o-b1"},
		},
		{
			name:   "its node takes no new pod: a draining pod stays and serves",
			in:     input(params, []Node{misfit("a"), desired("b")}, oldPod("o-a", "a", inPlace, draining), newPod("n-b", "b")),
			reopen: []string{"o-a"},
		},
		{
			name:   "going on: a draining pod waits for the kubelet, out of service",
			in:     input(params, desiredNodes("a", "b"), oldPod("o-a", "a", inPlace, draining), oldPod("o-b", "b", inPlace)),
			counts: &Counts{Desired: 2, Old: 2, Unavailable: 1},
		},
		{
			name:   "going on: a drained pod is updated",
			in:     input(params, desiredNodes("a", "b"), oldPod("o-a", "a", inPlace, gateClosed), oldPod("o-b", "b", inPlace)),
			update: []InPlaceUpdate{updated("o-a", "a")},
			counts: &Counts{Desired: 2, Old: 2, Unavailable: 1},
		},
		{
			name: "going on: a drained pod waits for slow start, out of service",
			in: input(Params{MaxUnavailable: 2, MaxParallelPodCreation: 1}, desiredNodes("a", "b"),
				newPod("n-a", "a", updating), oldPod("o-b", "b", inPlace, gateClosed)),
			counts: &Counts{Desired: 2, Current: 1, Updating: 1, Old: 1, Unavailable: 2},
		},
	})
}
