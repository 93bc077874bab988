package rollout

import (
	"testing"
)

// inMaintenance is a desired node put in maintenance (drained, cordoned,
// disrupted).
func inMaintenance(name string) Node {
	n := desired(name)
	n.Maintenance = true
	return n
}

// A node in maintenance keeps the agent it has: nothing is created,
// replaced or updated in place there, it is not desired, and its agent's
// being unavailable costs neither maxUnavailable nor its domain's budget.
// A surge it caught ends, leaving one agent on the node.
func TestComputeLeavesNodesInMaintenanceAlone(t *testing.T) {
	mu := func(n int) Params { return Params{MaxUnavailable: n, MaxParallelPodCreation: 100} }
	ms := func(n int) Params { return Params{MaxSurge: n, MaxParallelPodCreation: 100} }
	zoned := func(n Node, domain string) Node { n.Domain = domain; return n }
	topo := Params{MaxUnavailable: 10, MaxParallelPodCreation: 100, Topology: &Topology{MaxUnavailable: 1}}
	unresponsive := func(n Node) Node { n.Unresponsive = true; return n }
	misfitInMaintenance := misfit("a")
	misfitInMaintenance.Maintenance = true
	runPlanCases(t, []planCase{
		{
			name:   "an empty node in maintenance gets no pod",
			in:     input(mu(1), []Node{inMaintenance("a"), desired("b")}),
			create: []string{"b"},
			counts: &Counts{Desired: 1, Unavailable: 1, InMaintenance: 1},
		},
		{
			name:   "its old pod is not replaced, and the rollout goes on elsewhere",
			in:     input(mu(1), []Node{inMaintenance("a"), desired("b")}, oldPod("o-a", "a"), oldPod("o-b", "b")),
			delete: []Deletion{replaced("o-b", "b")},
			counts: &Counts{Desired: 1, Old: 1, InMaintenance: 1},
		},
		{
			name:   "its unavailable agent does not eat maxUnavailable",
			in:     input(mu(1), []Node{inMaintenance("a"), desired("b")}, oldPod("o-a", "a", notReady), oldPod("o-b", "b")),
			delete: []Deletion{replaced("o-b", "b")},
			counts: &Counts{Desired: 1, Old: 1, InMaintenance: 1},
		},
		{
			name:   "its failed agent is not recreated",
			in:     input(mu(1), []Node{inMaintenance("a"), desired("b")}, oldPod("o-a", "a", failed), newPod("n-b", "b")),
			counts: &Counts{Desired: 1, Current: 1, Ready: 1, Available: 1, UpToDate: 1, InMaintenance: 1},
		},
		{
			name:   "nor does it eat its domain's budget",
			in:     input(topo, []Node{zoned(inMaintenance("a"), "z1"), zoned(desired("b"), "z1")}, oldPod("o-a", "a", notReady), oldPod("o-b", "b")),
			delete: []Deletion{replaced("o-b", "b")},
			counts: &Counts{Desired: 1, Old: 1, InMaintenance: 1, Domains: []DomainCounts{{Name: "z1", State: DomainUpdating, Desired: 1}}},
		},
		{
			name:   "no surge starts there",
			in:     input(ms(2), []Node{inMaintenance("a"), desired("b")}, oldPod("o-a", "a"), oldPod("o-b", "b")),
			create: []string{"b"},
			counts: &Counts{Desired: 1, Old: 1, InMaintenance: 1},
		},
		{
			name:   "a surge it caught ends on the new pod when that is available",
			in:     input(ms(1), []Node{inMaintenance("a"), desired("b")}, oldPod("o-a", "a"), newPod("n-a", "a"), oldPod("o-b", "b")),
			create: []string{"b"},
			delete: []Deletion{surgeEnded("o-a", "a")},
			counts: &Counts{Desired: 1, Old: 1, SurgeEnding: 1, InMaintenance: 1},
		},
		{
			name:   "else on the old pod the node ran",
			in:     input(ms(1), []Node{inMaintenance("a"), desired("b")}, oldPod("o-a", "a"), pod("n-a", "a", true), oldPod("o-b", "b")),
			create: []string{"b"},
			delete: []Deletion{surgeEnded("n-a", "a")},
			counts: &Counts{Desired: 1, Old: 1, SurgeEnding: 1, InMaintenance: 1},
		},
		{
			name:   "duplicates end too",
			in:     input(ms(1), []Node{inMaintenance("a")}, oldPod("o1-a", "a"), oldPod("o2-a", "a", notReady)),
			delete: []Deletion{surgeEnded("o2-a", "a")},
			counts: &Counts{SurgeEnding: 1, InMaintenance: 1},
		},
		{
			name:   "an old pod drained for an in-place update is reopened, not updated",
			in:     input(mu(1), []Node{inMaintenance("a"), desired("b")}, oldPod("o-a", "a", inPlace, gateClosed), oldPod("o-b", "b", inPlace)),
			reopen: []string{"o-a"},
			update: []InPlaceUpdate{{Pod: "o-b", Node: "b"}},
			counts: &Counts{Desired: 1, Old: 1, InMaintenance: 1},
		},
		{
			name:   "an unresponsive node in maintenance counts as in maintenance",
			in:     input(mu(1), []Node{unresponsive(inMaintenance("a")), unresponsive(desired("b"))}),
			counts: &Counts{InMaintenance: 1, IgnoredUnresponsive: 1},
		},
		{
			name:   "a NoSchedule misfit in maintenance counts as in maintenance",
			in:     input(mu(1), []Node{misfitInMaintenance}, oldPod("o-a", "a")),
			counts: &Counts{InMaintenance: 1},
		},
	})
}
