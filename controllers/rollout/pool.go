package rollout

import (
	"slices"
	"strings"
)

// pool holds the candidates the global phase draws from, each list in
// node order, so that it reads no more of a list than the budgets let it
// take: a State keeps them in ordered sets from one plan to the next,
// Compute builds them as slices.
type pool interface {
	// emptyNodes appends to out the first n desired nodes with no pod at
	// all.
	emptyNodes(n int, out []string) []string
	// olds appends to out the first n old pods of kind k in src.
	olds(k kind, src source, n int, out []Pod) []Pod
}

// source is one list of candidates of a kind: those of a class on the
// nodes of a domain (on every node without a topology, where domain is
// empty).
type source struct {
	domain string
	class  class
}

// sources appends to srcs the lists of classes cs in domain.
func sources(srcs []source, domain string, cs []class) []source {
	for _, c := range cs {
		srcs = append(srcs, source{domain: domain, class: c})
	}
	return srcs
}

// all asks firstOf for every candidate.
const all = int(^uint(0) >> 1)

// firstOf returns, in node order, the first n pods of kind k of the union
// of srcs, each of which is in node order, no node in two of them.
func firstOf(pl pool, k kind, n int, srcs []source) []Pod {
	if n <= 0 {
		return nil
	}
	var out []Pod
	parts := 0
	for _, src := range srcs {
		before := len(out)
		if out = pl.olds(k, src, n, out); len(out) > before {
			parts++
		}
	}
	if parts > 1 {
		slices.SortFunc(out, func(a, b Pod) int { return strings.Compare(a.Node, b.Node) })
	}
	return out[:min(n, len(out))]
}

// lists are the candidates of one domain by kind and class, in node order.
type lists [kinds][classes][]Pod

// slicePool is the pool of Compute, filled node by node in node order.
type slicePool struct {
	empty    []string
	byDomain map[string]*lists
}

func (sp *slicePool) add(name string, f *fragment) {
	if f.empty {
		sp.empty = append(sp.empty, name)
	}
	var l *lists
	for k, on := range f.lists {
		if !on {
			continue
		}
		if l == nil {
			l = sp.byDomain[f.domain]
			if l == nil {
				l = new(lists)
				sp.byDomain[f.domain] = l
			}
		}
		c := classOf(&f.old)
		l[k][c] = append(l[k][c], f.old)
	}
}

func (sp *slicePool) emptyNodes(n int, out []string) []string {
	return append(out, sp.empty[:min(n, len(sp.empty))]...)
}

func (sp *slicePool) olds(k kind, src source, n int, out []Pod) []Pod {
	l := sp.byDomain[src.domain]
	if l == nil {
		return out
	}
	list := l[k][src.class]
	return append(out, list[:min(n, len(list))]...)
}
