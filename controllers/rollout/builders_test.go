package rollout

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
)

// now is the fixed clock of the table tests.
var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// desired is a node the template fits.
func desired(name string) Node {
	return Node{Name: name, ShouldRun: true, ShouldContinueRunning: true}
}

// misfit is a node with an untolerated NoSchedule taint: pods stay, none
// are placed.
func misfit(name string) Node {
	return Node{Name: name, ShouldContinueRunning: true}
}

// unfit is a node the template no longer fits, or a node that is gone.
func unfit(name string) Node {
	return Node{Name: name}
}

// desiredNodes returns desired nodes with the given names.
func desiredNodes(names ...string) []Node {
	nodes := make([]Node, 0, len(names))
	for _, name := range names {
		nodes = append(nodes, desired(name))
	}
	return nodes
}

type podOpt func(*Pod)

// pod builds a pod of the replica set being planned (new) when isNew is
// true, else of an older one. Without options it is created an hour ago and
// is not ready.
func pod(name, node string, isNew bool, opts ...podOpt) Pod {
	p := Pod{Name: name, Node: node, New: isNew, CreatedAt: now.Add(-time.Hour)}
	for _, opt := range opts {
		opt(&p)
	}
	return p
}

// newPod and oldPod are available pods (ready for an hour) unless options
// say otherwise.
func newPod(name, node string, opts ...podOpt) Pod {
	return pod(name, node, true, append([]podOpt{readyFor(time.Hour)}, opts...)...)
}

func oldPod(name, node string, opts ...podOpt) Pod {
	return pod(name, node, false, append([]podOpt{readyFor(time.Hour)}, opts...)...)
}

// readyFor makes the pod ready since d before now.
func readyFor(d time.Duration) podOpt {
	return func(p *Pod) { p.ReadySince = now.Add(-d) }
}

func notReady(p *Pod)      { p.ReadySince = time.Time{} }
func failed(p *Pod)        { p.Failed = true; p.ReadySince = time.Time{} }
func terminating(p *Pod)   { p.Terminating = true }
func unschedulable(p *Pod) { p.Unschedulable = true; p.ReadySince = time.Time{} }

func createdAgo(d time.Duration) podOpt {
	return func(p *Pod) { p.CreatedAt = now.Add(-d) }
}

// input builds an Input at now, grouping pods by their node.
func input(params Params, nodes []Node, pods ...Pod) Input {
	in := Input{Nodes: nodes, Pods: map[string][]Pod{}, Params: params, Now: now}
	for _, p := range pods {
		in.Pods[p.Node] = append(in.Pods[p.Node], p)
	}
	return in
}

// withBackoff sets the backoff of a node.
func withBackoff(in Input, node string, until time.Time) Input {
	if in.BackoffUntil == nil {
		in.BackoffUntil = map[string]time.Time{}
	}
	in.BackoffUntil[node] = until
	return in
}

func replaced(pod, node string) Deletion {
	return Deletion{Pod: pod, Node: node, Reason: DeleteReplaced}
}

func misplaced(pod, node string) Deletion {
	return Deletion{Pod: pod, Node: node, Reason: DeleteMisplaced}
}

func duplicate(pod, node string) Deletion {
	return Deletion{Pod: pod, Node: node, Reason: DeleteDuplicate}
}

func failedDeletion(pod, node string) Deletion {
	return Deletion{Pod: pod, Node: node, Reason: DeleteFailed}
}

func surgeEnded(pod, node string) Deletion {
	return Deletion{Pod: pod, Node: node, Reason: DeleteSurgeEnded}
}

// planCase is one row of a table: the expected plan for an input. Create is
// compared in order (most urgent first), Delete, UpdateInPlace and
// FailedNodes as sets. Counts is compared whole when set.
type planCase struct {
	name    string
	in      Input
	create  []string
	delete  []Deletion
	update  []InPlaceUpdate
	reopen  []string
	failed  []string
	requeue time.Duration
	counts  *Counts
}

func runPlanCases(t *testing.T, cases []planCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			plan := Compute(tc.in)
			if len(tc.create) == 0 {
				g.Expect(plan.Create).To(gomega.BeEmpty(), "Create")
			} else {
				g.Expect(plan.Create).To(gomega.Equal(tc.create), "Create")
			}
			if len(tc.delete) == 0 {
				g.Expect(plan.Delete).To(gomega.BeEmpty(), "Delete")
			} else {
				g.Expect(plan.Delete).To(gomega.ConsistOf(tc.delete), "Delete")
			}
			if len(tc.update) == 0 {
				g.Expect(plan.UpdateInPlace).To(gomega.BeEmpty(), "UpdateInPlace")
			} else {
				g.Expect(plan.UpdateInPlace).To(gomega.ConsistOf(tc.update), "UpdateInPlace")
			}
			if len(tc.reopen) == 0 {
				g.Expect(plan.Reopen).To(gomega.BeEmpty(), "Reopen")
			} else {
				g.Expect(plan.Reopen).To(gomega.ConsistOf(tc.reopen), "Reopen")
			}
			if len(tc.failed) == 0 {
				g.Expect(plan.FailedNodes).To(gomega.BeEmpty(), "FailedNodes")
			} else {
				g.Expect(plan.FailedNodes).To(gomega.ConsistOf(tc.failed), "FailedNodes")
			}
			g.Expect(plan.RequeueAfter).To(gomega.Equal(tc.requeue), "RequeueAfter")
			if tc.counts != nil {
				// The node counts have their own test (TestNodeCounts)
				// and are checked against a plain count on every
				// random stream; the table's rows leave them out.
				got := plan.Counts
				got.Running, got.KeptNew, got.KeptOld = NodeCounts{}, 0, 0
				g.Expect(got).To(gomega.Equal(*tc.counts), "Counts")
			}
		})
	}
}
