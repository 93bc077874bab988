package rollout

import (
	"iter"
	"time"

	"github.com/google/btree"
)

// sums are the running sums of the fragments a State counts: fragments
// are added and taken back one node at a time. What is not a sum (the
// earliest requeue, the latest availability in a domain, the lists in node
// order) is kept in ordered sets, so that taking a fragment back is as
// cheap as adding it.
type sums struct {
	tally tally
	// acting are the nodes with a part of their own in the plan.
	acting *btree.BTreeG[string]
	// requeue and expiry hold each fragment's requeueAt and expiry.
	requeue, expiry *btree.BTreeG[timedNode]
	empty           *btree.BTreeG[string]
	byDomain        map[string]*treeLists
	domains         map[string]*domainSum
}

// timedNode is a node at a time, ordered by time then node.
type timedNode struct {
	at   time.Time
	node string
}

func lessTimed(a, b timedNode) bool {
	if !a.at.Equal(b.at) {
		return a.at.Before(b.at)
	}
	return a.node < b.node
}

// treeLists are the candidates of one domain by kind and class, ordered
// by node.
type treeLists [kinds][classes]*btree.BTreeG[*Pod]

// domainSum is the sum of the domain tallies of a domain's nodes, with the
// times their pods became available, the latest of which is the domain's.
type domainSum struct {
	tally domainTally
	since *btree.BTreeG[timedNode]
}

// degree is the B-tree degree: wide nodes, few levels, little overhead per
// item.
const degree = 32

func newSums() *sums {
	return &sums{
		acting:   btree.NewG(degree, lessName),
		requeue:  btree.NewG(degree, lessTimed),
		expiry:   btree.NewG(degree, lessTimed),
		empty:    btree.NewG(degree, lessName),
		byDomain: map[string]*treeLists{},
		domains:  map[string]*domainSum{},
	}
}

func lessName(a, b string) bool { return a < b }

func lessPodNode(a, b *Pod) bool { return a.Node < b.Node }

// ascend yields the items of t in order.
func ascend[T any](t *btree.BTreeG[T]) iter.Seq[T] {
	return func(yield func(T) bool) { t.Ascend(btree.ItemIteratorG[T](yield)) }
}

// setIn adds x to t or takes it out.
func setIn[T any](t *btree.BTreeG[T], x T, in bool) {
	if in {
		t.ReplaceOrInsert(x)
	} else {
		t.Delete(x)
	}
}

// apply adds the fragment of node name, kept in e, to the sums (sign 1) or
// takes it back (sign -1).
func (s *sums) apply(name string, e *entry, sign int) {
	f, in := &e.frag, sign > 0
	s.tally.add(&f.tally, sign)
	if f.acts() {
		setIn(s.acting, name, in)
	}
	if !f.requeueAt.IsZero() {
		setIn(s.requeue, timedNode{f.requeueAt, name}, in)
	}
	if !e.expires.IsZero() {
		setIn(s.expiry, timedNode{e.expires, name}, in)
	}
	if f.empty {
		setIn(s.empty, name, in)
	}
	for k, on := range f.lists {
		if on {
			setIn(s.list(f.domain, kind(k), classOf(&f.old)), &f.old, in)
		}
	}
	if f.inDomain {
		s.applyDomain(name, f, sign)
	}
}

func (s *sums) applyDomain(name string, f *fragment, sign int) {
	d := s.domains[f.domain]
	if d == nil {
		d = &domainSum{since: btree.NewG(degree, lessTimed)}
		s.domains[f.domain] = d
	}
	d.tally.add(&f.dom, sign)
	if !f.dom.availableSince.IsZero() {
		setIn(d.since, timedNode{f.dom.availableSince, name}, sign > 0)
	}
	// Every desired node counts in its domain's desired: a domain exists
	// while one is left.
	if d.tally.desired == 0 {
		delete(s.domains, f.domain)
	}
}

// list is the ordered set of candidates of kind k and class c in domain.
func (s *sums) list(domain string, k kind, c class) *btree.BTreeG[*Pod] {
	l := s.byDomain[domain]
	if l == nil {
		l = new(treeLists)
		s.byDomain[domain] = l
	}
	if l[k][c] == nil {
		l[k][c] = btree.NewG(degree, lessPodNode)
	}
	return l[k][c]
}

// observed is the sums as the global phase reads them.
func (s *sums) observed() observed {
	obs := observed{tally: s.tally, pool: s}
	if first, ok := s.requeue.Min(); ok {
		obs.requeueAt = first.at
	}
	for name, d := range s.domains {
		dom := &domain{name: name, domainTally: d.tally}
		if last, ok := d.since.Max(); ok {
			dom.availableSince = last.at
		}
		obs.domains = append(obs.domains, dom)
	}
	return obs
}

func (s *sums) emptyNodes(n int, out []string) []string {
	return appendFirst(s.empty, n, out)
}

func (s *sums) olds(k kind, src source, n int, out []Pod) []Pod {
	l := s.byDomain[src.domain]
	if l == nil || l[k][src.class] == nil {
		return out
	}
	taken := 0
	l[k][src.class].Ascend(func(p *Pod) bool {
		if taken == n {
			return false
		}
		out = append(out, *p)
		taken++
		return true
	})
	return out
}

// appendFirst appends to out the first n items of t.
func appendFirst[T any](t *btree.BTreeG[T], n int, out []T) []T {
	taken := 0
	t.Ascend(func(x T) bool {
		if taken == n {
			return false
		}
		out = append(out, x)
		taken++
		return true
	})
	return out
}
