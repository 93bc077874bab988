package canary

import "github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"

// Spread returns the canary strategy of eds with, when it names no
// anti-affinity keys, the key of its rollout's topology as one: the canary
// then tries the new template in every domain the rollout will take in
// turn.
func Spread(eds *v1alpha1.ExtendedDaemonSet) *v1alpha1.CanaryStrategy {
	strategy := eds.Spec.Strategy.Canary
	topology := eds.Spec.Strategy.RollingUpdate.Topology
	if strategy == nil || topology == nil || topology.Key == "" || len(strategy.NodeAntiAffinityKeys) > 0 {
		return strategy
	}
	spread := *strategy
	spread.NodeAntiAffinityKeys = []string{topology.Key}
	return &spread
}
