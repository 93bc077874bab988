package controllers

import (
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// pass is one reconcile of a replica set as the progress deadline sees it:
// where its pods stand, and when. The pods it writes are not progress, and
// not an input.
type pass struct {
	at     time.Duration
	counts rollout.Counts
	paused bool
	// baking: the rollout's domain bakes, holding the next one back.
	baking bool
}

// runPasses runs the status computation of an active replica set over
// passes, each starting from the status the one before wrote, as the
// reconciles do, with a deadline of a minute; it returns the pass at which
// the replica set first read Stalled past the deadline, -1 if none did.
func runPasses(t *testing.T, passes []pass) int {
	t.Helper()
	start := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	ers := &v1alpha1.ExtendedDaemonSetReplicaSet{}
	obs := &observation{role: v1alpha1.ReplicaSetActive, deadline: time.Minute, input: rollout.Input{
		Nodes: []rollout.Node{{Name: "a", ShouldRun: true, ShouldContinueRunning: true}}, Pods: map[string][]rollout.Pod{}}}
	for i, p := range passes {
		now := start.Add(p.at)
		obs.input.Now, obs.input.Params.Paused = now, p.paused
		counts := p.counts
		if p.baking {
			counts.Domains = []rollout.DomainCounts{{Name: "zone-a", State: rollout.DomainBaking}}
		}
		setReplicaSetStatus(ers, obs, rollout.Plan{Counts: counts}, nil, now)
		if conditions.IsStalled(ers) {
			if r := conditions.GetReason(ers, v1alpha1.StalledCondition); r != v1alpha1.ReasonProgressDeadlineExceeded {
				t.Fatalf("pass %d: Stalled %s, want %s", i, r, v1alpha1.ReasonProgressDeadlineExceeded)
			}
			return i
		}
	}
	return -1
}

// Progress is a node gaining an available pod of the replica set, or an
// old pod that had to go gone. A pod that becomes available and fails
// again, or is evicted and recreated, keeps the counters and the writes
// moving while the rollout stands still: the deadline must still stall it.
// A healthy rollout quicker than the deadline between two steps never
// stalls.
func TestProgressDeadlineSeesThroughFlappingPods(t *testing.T) {
	// Three nodes: one up to date, one whose old pod was replaced by a new
	// pod that does not stay available, one old.
	up := rollout.Counts{Desired: 3, Current: 2, Ready: 2, Available: 2, UpToDate: 2, Old: 1}
	down := rollout.Counts{Desired: 3, Current: 2, Ready: 1, Available: 1, UpToDate: 1, Old: 1}
	gone := rollout.Counts{Desired: 3, Current: 1, Ready: 1, Available: 1, UpToDate: 1, Old: 1}
	var flapping, evicted, bakeFlapping []pass
	for i := range 12 {
		at := time.Duration(i) * 20 * time.Second
		counts := down
		if i%2 == 1 {
			counts = up
		}
		flapping = append(flapping, pass{at: at, counts: counts})
		// A crash-looping pod of a domain done with its pods: up, the
		// domain bakes and holds the next one back; down, it waits for the
		// pod again.
		bakeFlapping = append(bakeFlapping, pass{at: at, counts: counts, baking: i%2 == 1})
		// Evicted, deleted as failed, recreated, available again for a
		// while.
		switch i % 3 {
		case 0:
			evicted = append(evicted, pass{at: at, counts: down})
		case 1:
			evicted = append(evicted, pass{at: at, counts: gone})
		default:
			evicted = append(evicted, pass{at: at, counts: up})
		}
	}
	for _, tc := range []struct {
		name        string
		passes      []pass
		wantStalled bool
	}{
		{"a pod that passes readiness and crashes, again and again", flapping, true},
		{"a pod evicted and recreated in a loop", evicted, true},
		{"a crash-looping pod flipping its domain between baking and updating", bakeFlapping, true},
		{"a slow healthy rollout: an old pod gone, then its node's new pod available, 50s apart", []pass{
			{at: 0, counts: rollout.Counts{Desired: 3, Current: 1, Ready: 1, Available: 1, UpToDate: 1, Old: 2}},
			{at: 50 * time.Second, counts: rollout.Counts{Desired: 3, Current: 1, Ready: 1, Available: 1, UpToDate: 1, Old: 1}},
			{at: 100 * time.Second, counts: rollout.Counts{Desired: 3, Current: 2, Ready: 2, Available: 2, UpToDate: 2, Old: 1}},
			{at: 150 * time.Second, counts: rollout.Counts{Desired: 3, Current: 2, Ready: 2, Available: 2, UpToDate: 2, Old: 0}},
		}, false},
		{"a pause longer than the deadline, then resumed", []pass{
			{at: 0, counts: down},
			{at: 30 * time.Second, counts: down, paused: true},
			{at: 5 * time.Minute, counts: down},
			{at: 5*time.Minute + 50*time.Second, counts: up},
			{at: 6*time.Minute + 40*time.Second, counts: up},
		}, false},
		{"nothing moves", []pass{{at: 0, counts: down}, {at: 30 * time.Second, counts: down}, {at: 61 * time.Second, counts: down}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stalledAt := runPasses(t, tc.passes)
			if got := stalledAt >= 0; got != tc.wantStalled {
				t.Fatalf("stalled = %v (at pass %d), want %v", got, stalledAt, tc.wantStalled)
			}
		})
	}
}

// Progress as the README tells it: a node gaining an available pod of the
// new version, or a pod removed that had to go; measured against the mark
// of the last progress, not the pass before, so that nothing that comes
// and goes counts.
func TestProgressed(t *testing.T) {
	type mark = v1alpha1.ProgressMark
	// Five nodes: three up to date, two with an old pod.
	at := mark{UpToDate: 3, Old: 2}
	for _, tc := range []struct {
		name         string
		desired      int32
		stand        mark
		wantMark     mark
		wantProgress bool
	}{
		{"nothing moved", 5, mark{UpToDate: 3, Old: 2}, at, false},
		{"a flapping pod not available", 5, mark{UpToDate: 2, Old: 2}, at, false},
		{"a flapping pod available again", 5, mark{UpToDate: 3, Old: 2}, at, false},
		{"a pod evicted, its node empty", 5, mark{UpToDate: 2, Old: 2}, at, false},
		{"a node newly available at the new version", 5, mark{UpToDate: 4, Old: 2}, mark{UpToDate: 4, Old: 2}, true},
		{"an old pod that had to go removed", 5, mark{UpToDate: 3, Old: 1}, mark{UpToDate: 3, Old: 1}, true},
		{"an old pod removed while a flapping pod is down", 5, mark{UpToDate: 2, Old: 1}, mark{UpToDate: 2, Old: 1}, true},
		{"a node added, its pod not yet available", 6, mark{UpToDate: 3, Old: 2}, at, false},
		{"a node added, its pod available", 6, mark{UpToDate: 4, Old: 2}, mark{UpToDate: 4, Old: 2}, true},
		{"an up-to-date node removed", 4, mark{UpToDate: 2, Old: 2}, mark{UpToDate: 2, Old: 2}, false},
		{"old pods of a failed canary returning", 5, mark{UpToDate: 2, Old: 3}, mark{UpToDate: 3, Old: 3}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, moved := progressed(at, 5, tc.stand, tc.desired)
			if got != tc.wantMark || moved != tc.wantProgress {
				t.Fatalf("progressed = %+v, %v; want %+v, %v", got, moved, tc.wantMark, tc.wantProgress)
			}
		})
	}
	// After an up-to-date node left, the next node up to date is progress.
	after, _ := progressed(at, 5, mark{UpToDate: 2, Old: 2}, 4)
	if _, moved := progressed(after, 4, mark{UpToDate: 3, Old: 2}, 4); !moved {
		t.Errorf("a node up to date after another left is not progress")
	}
}
