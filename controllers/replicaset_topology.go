package controllers

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/bake"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// topologyKey is the node label spec.strategy.rollingUpdate.topology
// rolls out by, empty without a topology.
func topologyKey(eds *v1alpha1.ExtendedDaemonSet) string {
	if t := eds.Spec.Strategy.RollingUpdate.Topology; t != nil {
		return t.Key
	}
	return ""
}

// domainOf is the domain of node for the topology key: the label's value,
// rollout.NoDomain without it, empty without a key.
func domainOf(node *corev1.Node, key string) string {
	if key == "" {
		return ""
	}
	if v, ok := node.Labels[key]; ok {
		return v
	}
	return rollout.NoDomain
}

// topologyParams resolves spec.strategy.rollingUpdate.topology for the
// planner. A percentage stays one: it resolves against each domain's
// desired nodes, which the planner counts.
func topologyParams(t *v1alpha1.RollingUpdateTopology) (*rollout.Topology, error) {
	if t == nil {
		return nil, nil
	}
	out := &rollout.Topology{MaxUnavailable: 1, Sequential: t.Order != v1alpha1.TopologyParallel}
	if v := t.MaxUnavailablePerDomain; v != nil {
		// Scaled against 100, a percentage is its own number.
		n, err := intstr.GetScaledValueFromIntOrPercent(v, 100, true)
		if err != nil {
			return nil, fmt.Errorf("spec.strategy.rollingUpdate.topology.maxUnavailablePerDomain %q: %w", v.String(), err)
		}
		out.MaxUnavailable, out.Percent = n, v.Type == intstr.String
	}
	if t.DomainBakeTime != nil && out.Sequential {
		out.BakeTime = t.DomainBakeTime.Duration
	}
	return out, nil
}

// judgeBakes makes the planner of the active replica set ers wait, with
// a bake analysis, for each bake's verdict as recorded in eds's status.
func judgeBakes(t *rollout.Topology, eds *v1alpha1.ExtendedDaemonSet, ers string) {
	if t == nil || t.BakeTime <= 0 || bake.AnalysisOf(eds) == nil {
		return
	}
	t.JudgedBakes, t.PassedThrough = true, bake.PassedThrough(eds.Status.Bake, ers)
}

// gateDomains makes the planner of the active replica set ers hold each
// domain after the first, with confirm-step webhooks, until its gates
// passed as recorded in eds's status.
func gateDomains(t *rollout.Topology, eds *v1alpha1.ExtendedDaemonSet, ers string) {
	if t == nil || !t.Sequential || !canary.DomainGated(eds) {
		return
	}
	t.GatedDomains, t.GatesPassedThrough = true, canary.DomainGatePassedThrough(eds.Status.DomainGate, ers)
}

// domainStatuses states the planner's domains for the replica set's
// status, at most v1alpha1.MaxStatusDomains of them: with more, from the
// first unfinished one, where the rollout is.
func domainStatuses(domains []rollout.DomainCounts) []v1alpha1.DomainStatus {
	if len(domains) == 0 {
		return nil
	}
	first := 0
	for first < len(domains) && domains[first].State == rollout.DomainDone {
		first++
	}
	first = max(0, min(first, len(domains)-v1alpha1.MaxStatusDomains))
	domains = domains[first:min(len(domains), first+v1alpha1.MaxStatusDomains)]
	out := make([]v1alpha1.DomainStatus, len(domains))
	for i, d := range domains {
		out[i] = v1alpha1.DomainStatus{
			Name: d.Name, State: v1alpha1.DomainState(d.State),
			Desired: int32(d.Desired), UpToDate: int32(d.UpToDate), Unavailable: int32(d.Unavailable),
		}
		if !d.BakingSince.IsZero() {
			out[i].BakingSince = &metav1.Time{Time: d.BakingSince}
		}
	}
	return out
}
