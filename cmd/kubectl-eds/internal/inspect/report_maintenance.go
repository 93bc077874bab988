package inspect

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// maxMaintenanceNamed bounds the nodes in maintenance the status names.
const maxMaintenanceNamed = 10

// nodeInMaintenance is a node the controller leaves alone, and why.
type nodeInMaintenance struct{ name, why string }

// nodesInMaintenance lists, by name, the nodes eds's agent runs on (or
// may, its template fitting there) that are in maintenance, with
// placement.Maintenance's reason: the controller's own definition. It
// lists nothing, and reads no node, while the status counts none.
func nodesInMaintenance(ctx context.Context, c client.Client, eds *v1alpha1.ExtendedDaemonSet) ([]nodeInMaintenance, error) {
	if eds.Status.NodesInMaintenance == 0 {
		return nil, nil
	}
	template, err := cli.CurrentTemplate(ctx, c, eds)
	if err != nil {
		return nil, err
	}
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	fitter := placement.NewFitter(template)
	var out []nodeInMaintenance
	for i := range nodes.Items {
		node := &nodes.Items[i]
		if why := placement.Maintenance(node); why != "" && fitter.Fit(node).ShouldContinueRunning {
			out = append(out, nodeInMaintenance{node.Name, why})
		}
	}
	slices.SortFunc(out, func(a, b nodeInMaintenance) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// maintenance tells how many nodes the controller leaves alone in
// maintenance, and names the first of them with why.
func (r *report) maintenance() {
	n := r.s.eds.Status.NodesInMaintenance
	if n == 0 {
		return
	}
	r.line("Maintenance:\t%d nodes left alone: no canary there, their agent neither replaced nor counted as unavailable", n)
	if err := r.s.maintenanceErr; err != nil {
		r.line("  (cannot name them: %s)", oneLine(err.Error()))
		return
	}
	for _, node := range r.s.maintenance[:min(len(r.s.maintenance), maxMaintenanceNamed)] {
		r.line("  %s\t%s", node.name, node.why)
	}
	if more := len(r.s.maintenance) - maxMaintenanceNamed; more > 0 {
		r.line("  ... and %d more", more)
	}
}
