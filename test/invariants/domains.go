package invariants

import (
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// DomainUnavailable: more nodes of one topology domain without an
// available agent than maxUnavailablePerDomain allows, with at least one of
// them taken down by the rollout.
const DomainUnavailable Rule = "DomainUnavailable"

// noDomain names the nodes without the topology key, as the controller
// does.
const noDomain = "(none)"

// topologyKey is the label a zone-by-zone rolling update goes by, empty
// without one.
func topologyKey(eds *v1alpha1.ExtendedDaemonSet) string {
	if t := eds.Spec.Strategy.RollingUpdate.Topology; t != nil {
		return t.Key
	}
	return ""
}

func (c *Checker) domainOf(node, key string) string {
	if n, ok := c.nodes[node]; ok {
		if v, ok := n.Labels[key]; ok {
			return v
		}
	}
	return noDomain
}

// domainBudget resolves maxUnavailablePerDomain as the controller does:
// against the domain's desired nodes, rounding up; 1 when unset.
func (c *Checker) domainBudget(s *setState, key, domain string) (budget, desired int) {
	for n := range s.desired {
		if c.domainOf(n, key) == domain {
			desired++
		}
	}
	v := s.eds.Spec.Strategy.RollingUpdate.Topology.MaxUnavailablePerDomain
	if v == nil {
		return 1, desired
	}
	budget, err := intstr.GetScaledValueFromIntOrPercent(v, desired, true)
	if err != nil {
		return 1, desired
	}
	return budget, desired
}

// checkDomainBudget is checkBudget within the domain of node, when the
// ExtendedDaemonSet rolls out by topology.
func (c *Checker) checkDomainBudget(s *setState, node string, now time.Time) {
	key := topologyKey(s.eds)
	if key == "" {
		return
	}
	domain := c.domainOf(node, key)
	nodes := []string{node}
	for n, o := range s.outages {
		if n != node && c.domainOf(n, key) == domain && (o.byRollout || o.since.Before(now.Add(-c.reactionTime()))) {
			nodes = append(nodes, n)
		}
	}
	budget, _ := c.domainBudget(s, key, domain)
	if len(nodes) <= budget {
		return
	}
	sort.Strings(nodes)
	c.suspects = append(c.suspects, suspect{eds: s.eds.Name, at: now, nodes: nodes, budget: budget, domain: domain})
}

// settleDomainSuspect confirms a suspected breach of a domain's budget
// unless, with what the other watches said since, its nodes were not all
// desired and in that domain, or the budget was larger.
func (c *Checker) settleDomainSuspect(s *setState, sus suspect) {
	key := topologyKey(s.eds)
	if key == "" {
		return
	}
	var still []string
	for _, n := range sus.nodes {
		if s.desired[n] && c.domainOf(n, key) == sus.domain {
			still = append(still, n)
		}
	}
	budget, desired := c.domainBudget(s, key, sus.domain)
	budget = max(sus.budget, budget)
	if len(still) <= budget {
		return
	}
	c.violate(sus.at, DomainUnavailable, "eds %s: %d nodes of domain %s without an available agent (%s), maxUnavailablePerDomain allows %d of %d",
		sus.eds, len(still), sus.domain, strings.Join(still, ", "), budget, desired)
}
