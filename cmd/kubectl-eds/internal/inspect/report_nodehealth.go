package inspect

import (
	"fmt"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// nodeEvidence shows, under an analysis table, what the newest
// measurement of each nodeHealth metric found on the nodes it blames: a
// node and what went wrong there since the change.
func (r *report) nodeEvidence(a *v1alpha1.AnalysisStatus) {
	for i := range a.Metrics {
		m := &a.Metrics[i]
		if len(m.Measurements) == 0 {
			continue
		}
		newest := m.Measurements[len(m.Measurements)-1]
		if len(newest.Nodes) == 0 {
			continue
		}
		// A section of its own: a node's message is too long for a column.
		r.line("  Nodes %s blames:", m.Name)
		for _, n := range newest.Nodes {
			r.line("    %s: %s", n.Node, oneLine(n.Message))
		}
	}
}

// nodeHealthThreshold is what a nodeHealth measurement is judged against,
// with the API's defaults.
func nodeHealthThreshold(nh *v1alpha1.NodeHealthMetric) string {
	unhealthy, drop := int32(0), int32(10)
	if nh.MaxUnhealthyNodes != nil {
		unhealthy = *nh.MaxUnhealthyNodes
	}
	if nh.MaxPodReadinessDrop != nil {
		drop = *nh.MaxPodReadinessDrop
	}
	return fmt.Sprintf("<= %d unhealthy nodes, pod readiness <= %d points below baseline", unhealthy, drop)
}
