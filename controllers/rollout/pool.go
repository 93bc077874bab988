package rollout

import (
	"iter"
	"slices"
	"strings"
)

// pool holds the candidates the global phase draws from, each list in
// node order, so that it reads no more of a list than the budgets let it
// take: a State keeps them in ordered sets from one plan to the next,
// Compute builds them as slices.
type pool interface {
	// emptyNodes yields the desired nodes with no pod at all.
	emptyNodes() iter.Seq[string]
	// olds yields the old pods of kind k and class c on the nodes of a
	// domain (of every node without a topology, where domain is empty).
	olds(k kind, domain string, c class) iter.Seq[Pod]
}

// all asks firstOf and firstNames for every item.
const all = int(^uint(0) >> 1)

// firstOf returns, in node order, the first n pods of the union of seqs,
// each of which is in node order, no node in two of them.
func firstOf(n int, seqs []iter.Seq[Pod]) []Pod {
	if n <= 0 {
		return nil
	}
	var out []Pod
	parts := 0
	for _, seq := range seqs {
		taken := 0
		for pod := range seq {
			if taken == n {
				break
			}
			out = append(out, pod)
			taken++
		}
		if taken > 0 {
			parts++
		}
	}
	if parts > 1 {
		slices.SortFunc(out, func(a, b Pod) int { return strings.Compare(a.Node, b.Node) })
	}
	return out[:min(n, len(out))]
}

// firstNames returns the first n names of seq.
func firstNames(n int, seq iter.Seq[string]) []string {
	var out []string
	for name := range seq {
		if len(out) >= n {
			break
		}
		out = append(out, name)
	}
	return out
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

func (sp *slicePool) emptyNodes() iter.Seq[string] { return slices.Values(sp.empty) }

func (sp *slicePool) olds(k kind, domain string, c class) iter.Seq[Pod] {
	l := sp.byDomain[domain]
	if l == nil {
		return slices.Values[[]Pod](nil)
	}
	return slices.Values(l[k][c])
}
