package rollout

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// zoned is a fleet of desired nodes in domains, rolled from old pods to
// new ones by carrying out plan after plan while time passes.
type zoned struct {
	nodes  []Node
	pods   map[string][]Pod
	params Params
	now    time.Time
	// order is the domains in the order the planner must take them.
	order   []string
	created int
	// neverPasses, with judged bakes, is a domain whose bake analysis
	// never passes; empty when every bake passes in time.
	neverPasses string
}

func (z *zoned) input() Input {
	return Input{Nodes: z.nodes, Pods: z.pods, Params: z.params, Now: z.now}
}

// genZoned draws a fleet: up to five domains, sometimes with nodes lacking
// the key, each node running an old pod (sometimes down), a new one, or
// none; random global and per-domain budgets, either order, and a bake.
func genZoned(r *rand.Rand) *zoned {
	n := 2 + r.IntN(40)
	z := &zoned{pods: map[string][]Pod{}, now: now}
	names := []string{"zone-c", "zone-a", "zone-b", "zone-e", "zone-d"}[:1+r.IntN(5)]
	if r.IntN(3) == 0 {
		names = append(names, NoDomain)
	}
	for i := range n {
		name := fmt.Sprintf("node-%02d", i)
		node := desired(name)
		node.Domain = names[r.IntN(len(names))]
		z.nodes = append(z.nodes, node)
		switch x := r.IntN(10); {
		case x < 7:
			z.add(name, false, r.IntN(8) != 0)
		case x < 9:
			z.add(name, true, true)
		}
	}
	z.params = genParams(r, n)
	z.params.SlowStartInterval, z.params.Paused, z.params.Frozen, z.params.MaxPodSchedulerFailure = 0, false, false, 0
	t := &Topology{MaxUnavailable: 1 + r.IntN(3), Sequential: r.IntN(3) != 0}
	if r.IntN(3) == 0 {
		t.Percent, t.MaxUnavailable = true, 1+r.IntN(100)
	}
	if t.Sequential && r.IntN(2) == 0 {
		t.BakeTime = time.Duration(1+r.IntN(30)) * time.Second
		t.JudgedBakes = r.IntN(2) == 0
	}
	z.params.Topology = t
	for _, node := range z.nodes {
		if !slices.Contains(z.order, node.Domain) {
			z.order = append(z.order, node.Domain)
		}
	}
	slices.SortFunc(z.order, CompareDomains)
	if t.JudgedBakes && r.IntN(3) == 0 {
		z.neverPasses = z.order[r.IntN(len(z.order))]
	}
	return z
}

// judge plays the bake analysis: the Baking domain of plan passes, now
// and then, at any moment of its bake, unless it is the one that never
// passes.
func (z *zoned) judge(r *rand.Rand, plan Plan) {
	t := z.params.Topology
	if !t.JudgedBakes {
		return
	}
	for _, d := range plan.Counts.Domains {
		if d.State == DomainBaking && d.Name != z.neverPasses && r.IntN(3) == 0 {
			t.PassedThrough = d.Name
		}
	}
}

// passed reports whether the bake analysis of domain passed.
func (z *zoned) passed(domain string) bool {
	t := z.params.Topology
	return !t.JudgedBakes || t.PassedThrough != "" && slices.Index(z.order, domain) <= slices.Index(z.order, t.PassedThrough)
}

func (z *zoned) add(node string, isNew, available bool) {
	z.created++
	p := Pod{Name: fmt.Sprintf("pod-%d", z.created), Node: node, New: isNew, CreatedAt: z.now}
	if available {
		p.ReadySince = z.now.Add(-time.Hour)
	}
	z.pods[node] = append(z.pods[node], p)
}

func (z *zoned) domainOf(node string) string {
	i := slices.IndexFunc(z.nodes, func(n Node) bool { return n.Name == node })
	return z.nodes[i].Domain
}

// budget is the per-domain budget of a domain of desired nodes.
func (z *zoned) budget(desired int) int {
	t := z.params.Topology
	if t.Percent {
		return (t.MaxUnavailable*desired + 99) / 100
	}
	return t.MaxUnavailable
}

// unavailable counts, in all and per domain, the nodes without an
// available live pod, nodes in maintenance aside.
func (z *zoned) unavailable() (total int, byDomain map[string]int) {
	byDomain = map[string]int{}
	for _, node := range z.nodes {
		if !node.Maintenance && !slices.ContainsFunc(z.pods[node.Name], func(p Pod) bool {
			return !p.Terminating && p.Available(z.params.MinReady, z.now)
		}) {
			total++
			byDomain[node.Domain]++
		}
	}
	return total, byDomain
}

// bakedAt says when domain is done and baked: every node not in
// maintenance runs one live, available new pod and no old one, and the
// last of them has been available for the bake time. ok is false while
// the domain is not done.
func (z *zoned) bakedAt(domain string) (at time.Time, ok bool) {
	for _, node := range z.nodes {
		if node.Domain != domain || node.Maintenance {
			continue
		}
		var live []Pod
		for _, p := range z.pods[node.Name] {
			if !p.Terminating {
				live = append(live, p)
			}
		}
		if len(live) != 1 || !live[0].New || !live[0].Available(z.params.MinReady, z.now) {
			return time.Time{}, false
		}
		if a := live[0].ReadySince.Add(z.params.MinReady); a.After(at) {
			at = a
		}
	}
	return at.Add(z.params.Topology.BakeTime), true
}

// touched lists the nodes whose old pod a plan replaces: deleted, updated
// in place, or surged by a new pod beside it.
func (z *zoned) touched(plan Plan) []string {
	var nodes []string
	for _, d := range plan.Delete {
		if d.Reason == DeleteReplaced {
			nodes = append(nodes, d.Node)
		}
	}
	for _, u := range plan.UpdateInPlace {
		nodes = append(nodes, u.Node)
	}
	for _, node := range plan.Create {
		if slices.ContainsFunc(z.pods[node], func(p Pod) bool { return !p.New && !p.Terminating }) {
			nodes = append(nodes, node)
		}
	}
	return nodes
}

func (z *zoned) apply(plan Plan) {
	for _, d := range plan.Delete {
		for i := range z.pods[d.Node] {
			if z.pods[d.Node][i].Name == d.Pod {
				z.pods[d.Node][i].Terminating = true
			}
		}
	}
	for _, u := range plan.UpdateInPlace {
		for i := range z.pods[u.Node] {
			if p := &z.pods[u.Node][i]; p.Name == u.Pod {
				p.New, p.Updating, p.ReadySince = true, true, time.Time{}
			}
		}
	}
	for _, node := range plan.Create {
		z.add(node, true, false)
	}
}

// settle lets a few seconds pass: pods terminating go away, pods starting
// become ready, each with a chance, and, when crashes is set, now and then
// an available new pod crashes, which sends its domain back to Updating,
// and nodes enter and leave maintenance, where a drain may take their
// agents down.
func (z *zoned) settle(r *rand.Rand, crashes bool) {
	z.now = z.now.Add(time.Duration(1+r.IntN(10)) * time.Second)
	for i := range z.nodes {
		node := &z.nodes[i]
		switch {
		case !crashes:
			node.Maintenance = false
		case r.IntN(30) == 0:
			node.Maintenance = !node.Maintenance
		case node.Maintenance && r.IntN(4) == 0:
			for j := range z.pods[node.Name] {
				z.pods[node.Name][j].ReadySince = time.Time{}
			}
		}
	}
	for node, pods := range z.pods {
		kept := pods[:0]
		for _, p := range pods {
			switch {
			case p.Terminating && r.IntN(2) == 0:
				continue
			case !p.Terminating && !p.Ready() && r.IntN(2) == 0:
				p.ReadySince, p.Updating = z.now, false
			case crashes && p.New && p.Ready() && r.IntN(200) == 0:
				p.ReadySince = time.Time{}
			}
			kept = append(kept, p)
		}
		z.pods[node] = kept
	}
}

// TestPropertyTopologyRollout rolls random fleets out domain by domain and
// checks, after every plan carried out, that neither the global budget nor
// any domain's was exceeded by the plan (nodes in maintenance, which come
// and go while crashes last, out of both), that no old pod of a node in
// maintenance was replaced, that a Sequential rollout touched
// no old pod of a domain before every earlier domain was done and baked,
// and, with judged bakes, before its bake analysis passed, and that every
// node ends on the new template, unless a bake analysis never passes.
func TestPropertyTopologyRollout(t *testing.T) {
	seed, only := propertySeed(t)
	for c := range 400 {
		if only >= 0 && c != only {
			continue
		}
		r := caseRand(seed, c)
		z := genZoned(r)
		fail := func(round int, format string, args ...any) {
			t.Helper()
			t.Fatalf("seed %d case %d round %d (params %+v, topology %+v): %s", seed, c, round, z.params, *z.params.Topology, fmt.Sprintf(format, args...))
		}
		tr := newTracker()
		for round := 0; ; round++ {
			if round == 3000 {
				if z.neverPasses != "" {
					break
				}
				fail(round, "no convergence: %d nodes not on the new template", z.notNew())
			}
			if z.allNew() {
				break
			}
			desired := map[string]int{}
			for _, node := range z.nodes {
				if !node.Maintenance {
					desired[node.Domain]++
				}
			}
			uBefore, dBefore := z.unavailable()
			plan, err := tr.plan(z.input())
			if err != nil {
				fail(round, "%v", err)
			}
			for _, node := range z.touched(plan) {
				if z.nodes[slices.IndexFunc(z.nodes, func(n Node) bool { return n.Name == node })].Maintenance {
					fail(round, "node %s in maintenance has its old pod replaced", node)
				}
			}
			if z.params.Topology.Sequential {
				for _, node := range z.touched(plan) {
					domain := z.domainOf(node)
					for _, earlier := range z.order[:slices.Index(z.order, domain)] {
						if desired[earlier] == 0 {
							// Every node of it in maintenance: the domain
							// has nothing to roll now, and waiting for it
							// would let maintenance block the rollout.
							continue
						}
						if at, done := z.bakedAt(earlier); !done || z.now.Before(at) || !z.passed(earlier) {
							fail(round, "node %s of domain %s touched before domain %s was done and baked (done %t, baked at %s, now %s, analysis passed %t)",
								node, domain, earlier, done, at, z.now, z.passed(earlier))
						}
					}
				}
			}
			z.apply(plan)
			z.judge(r, plan)
			u, byDomain := z.unavailable()
			if u > z.params.MaxUnavailable && u > uBefore {
				fail(round, "%d nodes down (was %d), maxUnavailable %d", u, uBefore, z.params.MaxUnavailable)
			}
			for domain, n := range byDomain {
				if b := z.budget(desired[domain]); n > b && n > dBefore[domain] {
					fail(round, "domain %s has %d nodes down (was %d), budget %d", domain, n, dBefore[domain], b)
				}
			}
			// Crashes stop after a while: a fleet whose pods keep crashing
			// may never finish, and should not.
			z.settle(r, round < crashRounds)
		}
	}
}

// crashRounds is how long new pods may crash in a case.
const crashRounds = 100

// allNew: every node runs one available new pod.
func (z *zoned) allNew() bool { return z.notNew() == 0 }

// notNew counts the nodes not running one available new pod.
func (z *zoned) notNew() int {
	n := 0
	for _, node := range z.nodes {
		pods := z.pods[node.Name]
		if len(pods) != 1 || !pods[0].New || !pods[0].Available(z.params.MinReady, z.now) {
			n++
		}
	}
	return n
}
