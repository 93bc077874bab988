package rollout

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
)

// zoneNode is a desired node of a domain.
func zoneNode(name, domain string) Node {
	n := desired(name)
	n.Domain = domain
	return n
}

// twoZones are four nodes in zones a and b, two each, and one without
// the key, each running an available old pod unless pods say otherwise.
func twoZones(params Params, pods ...Pod) Input {
	nodes := []Node{zoneNode("b1", "b"), zoneNode("a1", "a"), zoneNode("x1", NoDomain), zoneNode("b2", "b"), zoneNode("a2", "a")}
	have := map[string]bool{}
	for _, p := range pods {
		have[p.Node] = true
	}
	for _, n := range nodes {
		if !have[n.Name] {
			pods = append(pods, oldPod("old-"+n.Name, n.Name))
		}
	}
	return input(params, nodes, pods...)
}

func zoned1(sequential bool, bake time.Duration) Params {
	return Params{MaxUnavailable: 5, MaxParallelPodCreation: 250,
		Topology: &Topology{MaxUnavailable: 1, Sequential: sequential, BakeTime: bake}}
}

// judged is zoned1, Sequential with a minute's bake judged by analysis,
// whose bakes passed through domain passedThrough; domain a is done and
// baked for an hour, unless the pods say otherwise.
func judged(passedThrough string) Params {
	p := zoned1(true, time.Minute)
	p.Topology.JudgedBakes, p.Topology.PassedThrough = true, passedThrough
	return p
}

// gated is zoned1, Sequential, with gates before each domain after the
// first that passed through domain passedThrough.
func gated(passedThrough string) Params {
	p := zoned1(true, 0)
	p.Topology.GatedDomains, p.Topology.GatesPassedThrough = true, passedThrough
	return p
}

func TestTopologyPlan(t *testing.T) {
	percent := zoned1(false, 0)
	percent.Topology = &Topology{MaxUnavailable: 50, Percent: true}
	global := zoned1(false, 0)
	global.MaxUnavailable = 2
	surge := zoned1(true, 0)
	surge.MaxUnavailable, surge.MaxSurge = 0, 5
	runPlanCases(t, []planCase{
		{
			name:   "sequential: the first domain alone, one pod at a time",
			in:     twoZones(zoned1(true, 0)),
			delete: []Deletion{replaced("old-a1", "a1")},
		},
		{
			name:   "parallel: one pod per domain at once, the nodes without the key included",
			in:     twoZones(zoned1(false, 0)),
			delete: []Deletion{replaced("old-a1", "a1"), replaced("old-b1", "b1"), replaced("old-x1", "x1")},
		},
		{
			name:   "parallel: the global budget still bounds the total, domains taking turns",
			in:     twoZones(global),
			delete: []Deletion{replaced("old-a1", "a1"), replaced("old-b1", "b1")},
		},
		{
			name:   "a percentage of the domain's desired nodes, rounded up",
			in:     twoZones(percent),
			delete: []Deletion{replaced("old-a1", "a1"), replaced("old-b1", "b1"), replaced("old-x1", "x1")},
		},
		{
			name:   "a domain down to its budget waits",
			in:     twoZones(zoned1(false, 0), pod("new-a1", "a1", true), pod("new-b1", "b1", true)),
			delete: []Deletion{replaced("old-x1", "x1")},
		},
		{
			name:    "sequential: a domain not done holds the next one back",
			in:      twoZones(zoned1(true, 0), newPod("new-a1", "a1"), pod("new-a2", "a2", true)),
			delete:  nil,
			requeue: 0,
		},
		{
			name:    "sequential: a done domain bakes before the next starts",
			in:      twoZones(zoned1(true, time.Minute), newPod("new-a1", "a1", readyFor(time.Hour)), newPod("new-a2", "a2", readyFor(20*time.Second))),
			requeue: 40 * time.Second,
		},
		{
			name:   "sequential: once baked, the next domain starts",
			in:     twoZones(zoned1(true, time.Minute), newPod("new-a1", "a1"), newPod("new-a2", "a2", readyFor(2*time.Minute))),
			delete: []Deletion{replaced("old-b1", "b1")},
		},
		{
			name: "judged: baked but its analysis has not passed, the next domain waits with no time to wait for",
			in:   twoZones(judged(""), newPod("new-a1", "a1"), newPod("new-a2", "a2")),
		},
		{
			name:    "judged: passed yet still baking, the bake time holds it",
			in:      twoZones(judged("a"), newPod("new-a1", "a1"), newPod("new-a2", "a2", readyFor(20*time.Second))),
			requeue: 40 * time.Second,
		},
		{
			name:   "judged: baked and passed, the next domain starts",
			in:     twoZones(judged("a"), newPod("new-a1", "a1"), newPod("new-a2", "a2")),
			delete: []Deletion{replaced("old-b1", "b1")},
		},
		{
			name: "judged: a later domain done early (canary nodes) does not pass an earlier one",
			in:   twoZones(judged(""), newPod("new-a1", "a1"), newPod("new-a2", "a2"), newPod("new-b1", "b1"), newPod("new-b2", "b2")),
		},
		{
			name:   "judged: a later domain passed covers the earlier ones",
			in:     twoZones(judged("b"), newPod("new-a1", "a1"), newPod("new-a2", "a2"), newPod("new-b1", "b1"), newPod("new-b2", "b2")),
			delete: []Deletion{replaced("old-x1", "x1")},
		},
		{
			name:   "judged: the first domain is not judged before it is done",
			in:     twoZones(judged("")),
			delete: []Deletion{replaced("old-a1", "a1")},
		},
		{
			name:   "gated: the first domain needs no gate",
			in:     twoZones(gated("")),
			delete: []Deletion{replaced("old-a1", "a1")},
		},
		{
			name: "gated: a done domain's next one waits for its gates, with no time to wait for",
			in:   twoZones(gated(""), newPod("new-a1", "a1"), newPod("new-a2", "a2")),
		},
		{
			name:   "gated: its gates passed, the next domain starts",
			in:     twoZones(gated("b"), newPod("new-a1", "a1"), newPod("new-a2", "a2")),
			delete: []Deletion{replaced("old-b1", "b1")},
		},
		{
			name: "gated: the gates of one domain do not open the next",
			in:   twoZones(gated("b"), newPod("new-a1", "a1"), newPod("new-a2", "a2"), newPod("new-b1", "b1"), newPod("new-b2", "b2")),
		},
		{
			name:   "gated: parallel domains have no gates",
			in:     twoZones(func() Params { p := gated(""); p.Topology.Sequential = false; return p }()),
			delete: []Deletion{replaced("old-a1", "a1"), replaced("old-b1", "b1"), replaced("old-x1", "x1")},
		},
		{
			// A failed canary's nodes go back to the template the rollout
			// came from: no turn, no bake, only the budgets.
			name: "sequential: a failed canary's pod in a later domain goes back at once, within its domain's budget",
			in: twoZones(zoned1(true, 2*time.Hour), newPod("new-a1", "a1"), newPod("new-a2", "a2"),
				returningPod("canary-b1", "b1"), returningPod("canary-x1", "x1"), newPod("new-b2", "b2")),
			delete:  []Deletion{replaced("canary-b1", "b1"), replaced("canary-x1", "x1")},
			requeue: time.Hour,
		},
		{
			name: "sequential: a failed canary's pods in the domain whose turn it is and a later one",
			in: twoZones(zoned1(true, 0), returningPod("canary-a1", "a1"), newPod("new-a2", "a2"),
				returningPod("canary-b1", "b1"), newPod("new-b2", "b2"), newPod("new-x1", "x1")),
			delete: []Deletion{replaced("canary-a1", "a1"), replaced("canary-b1", "b1")},
		},
		{
			// A canary reverted in git: its node goes back, the old pods
			// the rollout replaces beside it wait for their domain's turn.
			name: "sequential: a reverted canary's pod goes back at once, the old pods of its domain wait",
			in: twoZones(zoned1(true, 2*time.Hour), newPod("new-a1", "a1"), newPod("new-a2", "a2"),
				returningPod("canary-b1", "b1")),
			delete:  []Deletion{replaced("canary-b1", "b1")},
			requeue: time.Hour,
		},
		{
			name:   "sequential: the nodes without the key come last",
			in:     twoZones(zoned1(true, 0), newPod("new-a1", "a1"), newPod("new-a2", "a2"), newPod("new-b1", "b1"), newPod("new-b2", "b2")),
			delete: []Deletion{replaced("old-x1", "x1")},
		},
		{
			name:   "sequential: an empty node of a later domain gets its pod at once",
			in:     input(zoned1(true, 0), []Node{zoneNode("a1", "a"), zoneNode("b1", "b")}, oldPod("old-a1", "a1")),
			create: []string{"b1"},
			delete: []Deletion{replaced("old-a1", "a1")},
		},
		{
			name:   "sequential surge: only the domain whose turn it is",
			in:     twoZones(surge),
			create: []string{"a1", "a2"},
		},
	})
}

// Counts.Domains states every domain in order, with the one whose turn it
// is Updating, or Baking, and the later ones Pending.
func TestTopologyDomainCounts(t *testing.T) {
	g := gomega.NewWithT(t)
	plan := Compute(twoZones(zoned1(true, time.Minute), newPod("new-a1", "a1"), newPod("new-a2", "a2", readyFor(10*time.Second))))
	g.Expect(plan.Counts.Domains).To(gomega.Equal([]DomainCounts{
		{Name: "a", State: DomainBaking, Desired: 2, UpToDate: 2, BakingSince: now.Add(-10 * time.Second)},
		{Name: "b", State: DomainPending, Desired: 2},
		{Name: NoDomain, State: DomainPending, Desired: 1},
	}))
	plan = Compute(twoZones(zoned1(true, 0), newPod("new-a1", "a1"), pod("new-a2", "a2", true)))
	g.Expect(plan.Counts.Domains).To(gomega.Equal([]DomainCounts{
		{Name: "a", State: DomainUpdating, Desired: 2, UpToDate: 1, Unavailable: 1},
		{Name: "b", State: DomainPending, Desired: 2},
		{Name: NoDomain, State: DomainPending, Desired: 1},
	}))
	// Judged, a domain past its bake time still bakes until it passed.
	plan = Compute(twoZones(judged(""), newPod("new-a1", "a1"), newPod("new-a2", "a2", readyFor(2*time.Minute))))
	g.Expect(plan.Counts.Domains[0]).To(gomega.Equal(DomainCounts{Name: "a", State: DomainBaking, Desired: 2, UpToDate: 2,
		BakingSince: now.Add(-2 * time.Minute)}))
	plan = Compute(twoZones(judged("a"), newPod("new-a1", "a1"), newPod("new-a2", "a2", readyFor(2*time.Minute))))
	g.Expect(plan.Counts.Domains[0].State).To(gomega.Equal(DomainDone))
	g.Expect(plan.Counts.Domains[1].State).To(gomega.Equal(DomainUpdating))
	// Gated, the done domain is Done and the next one Pending until its
	// gates passed.
	plan = Compute(twoZones(gated(""), newPod("new-a1", "a1"), newPod("new-a2", "a2")))
	g.Expect(plan.Counts.Domains).To(gomega.Equal([]DomainCounts{
		{Name: "a", State: DomainDone, Desired: 2, UpToDate: 2},
		{Name: "b", State: DomainPending, Desired: 2},
		{Name: NoDomain, State: DomainPending, Desired: 1},
	}))
	plan = Compute(twoZones(gated("b"), newPod("new-a1", "a1"), newPod("new-a2", "a2")))
	g.Expect(plan.Counts.Domains[1].State).To(gomega.Equal(DomainUpdating))
	plan = Compute(twoZones(zoned1(false, 0)))
	g.Expect(plan.Counts.Domains).To(gomega.HaveEach(gomega.HaveField("State", DomainUpdating)))
	g.Expect(Compute(twoZones(Params{MaxUnavailable: 1, MaxParallelPodCreation: 1})).Counts.Domains).To(gomega.BeNil())
}

// What a canary spends in a domain counts against the domain's budget on
// the active side.
func TestTopologyElsewhereSpendsTheDomainBudget(t *testing.T) {
	in := twoZones(zoned1(false, 0))
	in.Elsewhere = Spent{Unavailable: 1, Domains: map[string]int{"a": 1}}
	runPlanCases(t, []planCase{{
		name:   "zone a spent by the canary",
		in:     in,
		delete: []Deletion{replaced("old-b1", "b1"), replaced("old-x1", "x1")},
	}})
}

// returningPod is an available pod, on node, of a canary that let the node
// go.
func returningPod(name, node string) Pod {
	p := oldPod(name, node)
	p.Returning = true
	return p
}
