package bench

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// scenario is one measured change of the agent.
type scenario struct {
	name string
	// what the table says was measured.
	what string
	// peers are the peers that run the same change; the others, and every
	// peer when it is empty, have no counterpart.
	peers []string
	// update scenarios measure a new image on a rolled-out agent; the
	// others measure the agent's creation on empty nodes.
	update bool
	// strategy is the ExtendedDaemonSet's; the peers roll out with its
	// maxUnavailable, maxSurge and type.
	strategy func() v1alpha1.ExtendedDaemonSetStrategy
	// inPlace scenarios expect the pods to be kept, their image patched.
	inPlace bool
	// workloadRef scenarios run our side as an ExtendedDaemonSet whose
	// workloadRef names a DaemonSet updated OnDelete: the manager deletes
	// its pods, kube-controller-manager's DaemonSet controller recreates
	// them. The measured change is the DaemonSet's image.
	workloadRef bool
}

// canaryDuration is the shortest canary the CRD accepts: it refuses 0s,
// and anything longer would measure the wait rather than the controller.
const canaryDuration = time.Millisecond

var scenarios = []scenario{
	{
		name: "create", what: "a new agent on empty nodes until every pod is available",
		peers:    []string{native, kruise},
		strategy: rollingUpdate(v1alpha1.RollingUpdateStandard),
	},
	{
		name: "update", what: "a new image, maxUnavailable 10%, no canary, until rolled out", update: true,
		peers:    []string{native, kruise},
		strategy: rollingUpdate(v1alpha1.RollingUpdateStandard),
	},
	{
		name: "surge", what: "a new image, maxSurge 10%, maxUnavailable 0, no canary, until rolled out", update: true,
		peers:    []string{native, kruise},
		strategy: surgeTenPercent,
	},
	{
		name: "canary", what: "a new image through a canary on 1% of the nodes, then maxUnavailable 10%, until promoted and rolled out",
		update:   true,
		strategy: canaryOnePercent,
	},
	{
		name: "workloadref", what: "a new image of a DaemonSet updated OnDelete, rolled out by an ExtendedDaemonSet's workloadRef, maxUnavailable 10%, no canary, until rolled out",
		peers: []string{native}, update: true, workloadRef: true,
		strategy: rollingUpdate(v1alpha1.RollingUpdateStandard),
	},
	{
		name: "workloadref-canary", what: "a new image of a DaemonSet updated OnDelete, rolled out by an ExtendedDaemonSet's workloadRef through a canary on 1% of the nodes, then maxUnavailable 10%, until promoted and rolled out",
		update: true, workloadRef: true,
		strategy: canaryOnePercent,
	},
	{
		name: "inplace", what: "a new image patched into the running pods (InPlaceIfPossible), maxUnavailable 10%, until rolled out",
		peers: []string{kruise}, update: true, inPlace: true,
		strategy: rollingUpdate(v1alpha1.RollingUpdateInPlaceIfPossible),
	},
}

func rollingUpdate(kind v1alpha1.RollingUpdateType) func() v1alpha1.ExtendedDaemonSetStrategy {
	return func() v1alpha1.ExtendedDaemonSetStrategy {
		unavailable := maxUnavailable
		return v1alpha1.ExtendedDaemonSetStrategy{
			RollingUpdate: v1alpha1.RollingUpdateStrategy{Type: kind, MaxUnavailable: &unavailable},
		}
	}
}

// surgeTenPercent replaces no pod before its successor is available:
// maxSurge 10%, maxUnavailable 0.
func surgeTenPercent() v1alpha1.ExtendedDaemonSetStrategy {
	s := rollingUpdate(v1alpha1.RollingUpdateStandard)()
	noneUnavailable, surge := intstr.FromInt32(0), maxSurge
	s.RollingUpdate.MaxUnavailable, s.RollingUpdate.MaxSurge = &noneUnavailable, &surge
	return s
}

// canaryOnePercent is the rolling update with a canary on 1% of the nodes
// first.
func canaryOnePercent() v1alpha1.ExtendedDaemonSetStrategy {
	s := rollingUpdate(v1alpha1.RollingUpdateStandard)()
	replicas := intstr.FromString("1%")
	s.Canary = &v1alpha1.CanaryStrategy{Replicas: &replicas, Duration: &metav1.Duration{Duration: canaryDuration}}
	return s
}

// scenariosNamed returns the scenarios of a comma-separated list, in the
// list's order.
func scenariosNamed(list string) ([]scenario, error) {
	var out []scenario
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(scenarios, func(s scenario) bool { return s.name == name })
		if i < 0 {
			return nil, fmt.Errorf("unknown scenario %q (known: %s)", name, scenarioNames())
		}
		out = append(out, scenarios[i])
	}
	return out, nil
}

// runBy says whether peer has a counterpart of sc.
func (sc scenario) runBy(peer string) bool { return slices.Contains(sc.peers, peer) }

// isWorkloadRef says whether the scenario named name is a workloadRef one.
func isWorkloadRef(name string) bool {
	return slices.ContainsFunc(scenarios, func(s scenario) bool { return s.name == name && s.workloadRef })
}

// isCanary says whether the scenario named name runs a canary.
func isCanary(name string) bool {
	return slices.ContainsFunc(scenarios, func(s scenario) bool { return s.name == name && s.strategy().Canary != nil })
}

func scenarioNames() string {
	names := make([]string, len(scenarios))
	for i, s := range scenarios {
		names[i] = s.name
	}
	return strings.Join(names, ",")
}
