package invariants

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// DomainUnavailable: more nodes of one topology domain without an
// available agent than maxUnavailablePerDomain allows, with at least one of
// them taken down by the rollout.
const DomainUnavailable Rule = "DomainUnavailable"

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
	return rollout.NoDomain
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
	budget, _ := c.domainBudget(s, key, domain)
	c.suspectBeyond(s, node, now, budget, domain)
}

// settleDomainSuspect confirms a suspected breach of a domain's budget
// unless, with what the other watches said since, its nodes were not all
// desired and in that domain, or the budget was larger.
func (c *Checker) settleDomainSuspect(s *setState, sus suspect) {
	key := topologyKey(s.eds)
	if key == "" {
		return
	}
	still := c.stillOut(s, sus)
	budget, desired := c.domainBudget(s, key, sus.domain)
	budget = max(sus.budget, budget)
	if len(still) <= budget {
		return
	}
	c.violate(sus.at, DomainUnavailable, "eds %s: %d nodes of domain %s without an available agent (%s), maxUnavailablePerDomain allows %d of %d",
		sus.eds, len(still), sus.domain, strings.Join(still, ", "), budget, desired)
}
