package canary

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/onsi/gomega"
)

// pickByScan is the pick SelectNodes makes, written the plain way: scan
// every healthy candidate in preference order for the first of the least
// used group. SelectNodes must choose exactly as it does, at a fraction of
// the cost on thousands of nodes.
func pickByScan(candidates []Candidate, want int, keys []string, previous []string) []string {
	used := map[string]int{}
	var chosen []string
	for _, name := range previous {
		for i := range candidates {
			if candidates[i].Name == name && len(chosen) < want && !slices.Contains(chosen, name) {
				chosen = append(chosen, name)
				used[group(&candidates[i], keys)]++
			}
		}
	}
	var rest []*Candidate
	for i := range candidates {
		if !slices.Contains(chosen, candidates[i].Name) && candidates[i].Unhealthy == "" {
			rest = append(rest, &candidates[i])
		}
	}
	slices.SortFunc(rest, func(a, b *Candidate) int {
		if a.Restarts != b.Restarts {
			if a.Restarts < b.Restarts {
				return -1
			}
			return 1
		}
		if a.Name < b.Name {
			return -1
		}
		return 1
	})
	for len(chosen) < want && len(rest) > 0 {
		best := 0
		for i, c := range rest {
			if used[group(c, keys)] < used[group(rest[best], keys)] {
				best = i
			}
		}
		chosen = append(chosen, rest[best].Name)
		used[group(rest[best], keys)]++
		rest = slices.Delete(rest, best, best+1)
	}
	slices.Sort(chosen)
	return chosen
}

func TestSelectNodesPicksAsAScanWould(t *testing.T) {
	g := gomega.NewWithT(t)
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 500 {
		names := rng.Perm(80)
		n := 1 + rng.IntN(60)
		candidates := make([]Candidate, n)
		for i := range candidates {
			labels := map[string]string{}
			if rng.IntN(5) > 0 {
				labels["zone"] = fmt.Sprintf("z%d", rng.IntN(4))
			}
			if rng.IntN(2) == 0 {
				labels["rack"] = fmt.Sprintf("r%d", rng.IntN(3))
			}
			candidates[i] = Candidate{Name: fmt.Sprintf("node-%02d", names[i]), Labels: labels, Restarts: int32(rng.IntN(3))}
			if rng.IntN(6) == 0 {
				candidates[i].Unhealthy = "the node is cordoned"
			}
		}
		keys := [][]string{nil, {"zone"}, {"zone", "rack"}}[rng.IntN(3)]
		var previous []string
		for range rng.IntN(4) {
			previous = append(previous, fmt.Sprintf("node-%02d", rng.IntN(80)))
		}
		want := rng.IntN(n + 2)
		g.Expect(SelectNodes(candidates, want, keys, previous)).To(gomega.Equal(pickByScan(candidates, want, keys, previous)),
			"round %d: %d candidates, want %d, keys %v, previous %v", round, n, want, keys, previous)
	}
}
