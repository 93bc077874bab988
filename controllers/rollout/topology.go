package rollout

import (
	"slices"
	"strings"
	"time"
)

// NoDomain is the domain of the nodes without the topology key. No label
// value can be spelled so, and it sorts last whatever the other names.
const NoDomain = "(none)"

// Topology replaces old pods domain by domain (zone by zone, for example).
// Node.Domain says which domain each node is in.
type Topology struct {
	// MaxUnavailable bounds the desired nodes of one domain without an
	// available pod that replacing old pods may cause: a count, or when
	// Percent is set, a percentage of the domain's desired nodes, rounded
	// up. MaxUnavailable of Params still bounds the total.
	MaxUnavailable int
	Percent        bool
	// Sequential replaces the old pods of one domain at a time, in domain
	// order: a domain's turn comes once every earlier domain is done and
	// has been for BakeTime.
	Sequential bool
	BakeTime   time.Duration
	// JudgedBakes, with Sequential and a BakeTime, also holds the next
	// domain back until the analysis of the done domain's bake passed:
	// until the domain is no later, in domain order, than PassedThrough,
	// the last domain whose bake passed (empty: none did yet). The
	// analysis itself runs elsewhere; its verdict is an input here.
	JudgedBakes   bool
	PassedThrough string
	// GatedDomains, with Sequential, holds each domain after the first
	// back, while it has old pods, until the gates before it passed: until
	// it is no later, in domain order, than GatesPassedThrough (empty: none
	// did yet). The gates are asked elsewhere; their verdict is an input
	// here.
	GatedDomains       bool
	GatesPassedThrough string
}

// gateClosed reports whether the gates before the domain at index i of
// the order, name, still hold it back.
func (t *Topology) gateClosed(i int, name string) bool {
	return t.Sequential && t.GatedDomains && i > 0 &&
		(t.GatesPassedThrough == "" || CompareDomains(name, t.GatesPassedThrough) > 0)
}

// passed reports whether the bake analysis of domain name passed: always
// without judged bakes.
func (t *Topology) passed(name string) bool {
	return !t.JudgedBakes || t.PassedThrough != "" && CompareDomains(name, t.PassedThrough) <= 0
}

// DomainState is where one domain stands.
type DomainState string

const (
	DomainPending  DomainState = "Pending"  // old pods wait for the domain's turn, or its gates
	DomainUpdating DomainState = "Updating" // old pods replaced, or new ones not available yet
	DomainBaking   DomainState = "Baking"   // done; the next domain waits for BakeTime and, judged, the verdict
	DomainDone     DomainState = "Done"     // every desired node runs an available new pod
)

// DomainCounts describe one domain, in domain order in Counts.Domains.
type DomainCounts struct {
	Name  string
	State DomainState
	// Desired, UpToDate and Unavailable count as Counts does, within the
	// domain; Unavailable is after the scheduler-failure allowance.
	Desired, UpToDate, Unavailable int
	// BakingSince, for a Baking domain, is when its bake began: when the
	// last of its pods became available.
	BakingSince time.Time
}

// WaitingAtGates is the domain whose gates hold it back, empty when none
// does: the first domain not done, when it is Pending, since only its
// gates keep the first unfinished domain from its turn.
func WaitingAtGates(domains []DomainCounts) string {
	for _, d := range domains {
		if d.State == DomainDone {
			continue
		}
		if d.State == DomainPending {
			return d.Name
		}
		return ""
	}
	return ""
}

// CompareDomains orders domains as a Sequential rollout takes them: by
// name, NoDomain last.
func CompareDomains(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == NoDomain:
		return 1
	case b == NoDomain:
		return -1
	}
	return strings.Compare(a, b)
}

// domain is what the planner gathers of one domain.
type domain struct {
	name string
	domainTally
	// excused is the share of the scheduler-failure allowance the domain
	// gets.
	excused int
	// open: old pods of the domain may be replaced now; room is what is
	// left of its budget.
	open bool
	room int
	// candidates are the old pods of the domain that may be replaced.
	candidates []Pod
}

func (d *domain) done() bool { return d.upToDate+d.excused == d.desired && d.surgeEnding == 0 }

// sources appends to srcs the lists of candidates of classes cs in the
// domain that may be replaced now: all of them when the domain is open,
// else only the returning ones.
func (d *domain) sources(srcs []source, cs []class) []source {
	for _, c := range cs {
		if d.open || c&returningClass != 0 {
			srcs = append(srcs, source{domain: d.name, class: c})
		}
	}
	return srcs
}

// domains are the domains of a plan; nil without a topology.
type domains struct {
	// ordered are the domains in domain order.
	ordered []*domain
}

func newDomains(ds []*domain) *domains {
	ordered := slices.Clone(ds)
	slices.SortFunc(ordered, func(a, b *domain) int { return CompareDomains(a.name, b.name) })
	return &domains{ordered: ordered}
}

// settle shares the scheduler-failure allowance among the domains in
// order, and opens those whose old pods may be replaced now, each with the
// room its budget leaves. It returns when time alone opens the next
// domain: the end of a bake.
func (ds *domains) settle(t *Topology, allowance int, elsewhere map[string]int, now time.Time) time.Duration {
	for _, d := range ds.ordered {
		d.excused = min(d.schedulerFailures, allowance)
		allowance -= d.excused
		d.unavailable -= d.excused
		budget := t.MaxUnavailable
		if t.Percent {
			budget = (t.MaxUnavailable*d.desired + 99) / 100
		}
		d.room = max(0, budget-d.unavailable-elsewhere[d.name])
		d.open = !t.Sequential
	}
	if !t.Sequential {
		return 0
	}
	for i, d := range ds.ordered {
		if !d.done() {
			d.open = !t.gateClosed(i, d.name)
			return 0
		}
		if held, left := ds.holds(t, d, now); held {
			return left
		}
	}
	return 0
}

// holds reports whether the done domain d holds the domains after it
// back at now, and how long until its bake time is over: while it bakes,
// and, with judged bakes, until its analysis passed, which no time alone
// brings. A domain with no work after it holds nothing back.
func (ds *domains) holds(t *Topology, d *domain, now time.Time) (bool, time.Duration) {
	if !t.Sequential || !ds.workAfter(d) {
		return false, 0
	}
	if bakedAt := d.availableSince.Add(t.BakeTime); now.Before(bakedAt) {
		return true, bakedAt.Sub(now)
	}
	return !t.passed(d.name), 0
}

// workAfter reports whether a domain after d is not done: a bake holds
// something back only then.
func (ds *domains) workAfter(d *domain) bool {
	i := slices.Index(ds.ordered, d)
	return slices.ContainsFunc(ds.ordered[i+1:], func(d *domain) bool { return !d.done() })
}

// counts states the domains for status, in order.
func (ds *domains) counts(t *Topology, now time.Time) []DomainCounts {
	out := make([]DomainCounts, 0, len(ds.ordered))
	turnTaken := false
	for i, d := range ds.ordered {
		c := DomainCounts{Name: d.name, Desired: d.desired, UpToDate: d.upToDate, Unavailable: d.unavailable}
		held := false
		if d.done() && !turnTaken {
			held, _ = ds.holds(t, d, now)
		}
		switch {
		case held:
			c.State, c.BakingSince, turnTaken = DomainBaking, d.availableSince, true
		case d.done():
			c.State = DomainDone
		case turnTaken && d.old > 0:
			c.State = DomainPending
		case d.old > 0 && t.gateClosed(i, d.name):
			// Its turn came, but its gates hold it back.
			c.State, turnTaken = DomainPending, true
		default:
			c.State, turnTaken = DomainUpdating, turnTaken || t.Sequential
		}
		out = append(out, c)
	}
	return out
}

// pick chooses, among the old available pods of classes cs, whose
// replacement spends the domains' budgets, those to replace now: only pods
// of open domains, or returning ones, within each domain's room and within
// allowed in all, taking from the domains in turn so that parallel domains
// progress together. A domain never gives more than its room nor more than
// allowed, so only that many of its candidates are read.
func (ds *domains) pick(pl pool, cs []class, allowed int) []Pod {
	var active []*domain
	for _, d := range ds.ordered {
		d.candidates = nil
		if d.room > 0 && allowed > 0 {
			d.candidates = firstOf(pl, kindOldAvailable, min(d.room, allowed), d.sources(nil, cs))
		}
		if len(d.candidates) > 0 {
			active = append(active, d)
		}
	}
	var out []Pod
	for round := 0; len(active) > 0 && allowed > len(out); round++ {
		next := active[:0]
		for _, d := range active {
			if allowed == len(out) {
				break
			}
			out = append(out, d.candidates[round])
			d.room--
			if round+1 < len(d.candidates) && d.room > 0 {
				next = append(next, d)
			}
		}
		active = next
	}
	return out
}

// spentByDomain is the unavailable nodes per domain, as another replica set sees
// them.
func (c Counts) spentByDomain() map[string]int {
	if c.Domains == nil {
		return nil
	}
	m := make(map[string]int, len(c.Domains))
	for _, d := range c.Domains {
		m[d.Name] = d.Unavailable
	}
	return m
}
