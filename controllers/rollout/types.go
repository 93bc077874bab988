// Package rollout decides, as a pure function of observed state, which pods
// a replica set creates, deletes and updates in place: one pod per eligible
// node, old pods replaced under maxUnavailable and maxSurge, domain by
// domain with a topology, slow start, pause and freeze.
// It makes no API calls, so a 5,000-node cluster is a table in a test.
// Compute plans from a whole input; State keeps the input node by node as
// watch events change it and plans at a cost that does not grow with the
// cluster (state.go).
package rollout

import (
	"time"
)

// Node is a node the replica set is responsible for, with what its template
// says about it.
type Node struct {
	Name string
	// ShouldRun: the template fits (node selector, required affinity,
	// taints); a pod is created here.
	ShouldRun bool
	// Unresponsive: the node has not been Ready for longer than a grace
	// period. Nothing a rollout does there can succeed (a pod deleted there
	// stays terminating until the node returns), so the node is left alone
	// and does not count against the budgets.
	Unresponsive bool
	// Maintenance: the node is in maintenance (placement.Maintenance:
	// draining, cordoned, disrupted, going away). It keeps the agent it
	// has, as an unresponsive node does: no pod is created, replaced or
	// updated in place there, it is not desired, and its agent's being
	// unavailable counts against neither MaxUnavailable nor its domain's
	// budget, so maintenance neither blocks a rollout nor eats its budget.
	// A surge it caught still ends, leaving one agent on the node.
	Maintenance bool
	// ShouldContinueRunning: pods already here may stay. True when
	// ShouldRun is; also true when only a NoSchedule taint is untolerated,
	// which, as for DaemonSets, keeps running pods but places no new ones.
	ShouldContinueRunning bool
	// Domain is the node's value of the topology key, NoDomain without
	// it; only read with Params.Topology.
	Domain string
}

// Pod is one pod of the ExtendedDaemonSet, of this replica set or another.
type Pod struct {
	Name string
	// Node is the node the pod is bound to or, before binding, the node its
	// required affinity names.
	Node string
	// New is true for pods of the replica set being planned; old pods belong
	// to other replica sets of the same ExtendedDaemonSet (or a migrated
	// DaemonSet) and are what a rolling update replaces.
	New bool
	// Failed: the pod ended (phase Failed) and will not run again.
	Failed bool
	// Terminating: deletion was requested; it no longer counts as running.
	Terminating bool
	// Unschedulable: the scheduler could not place the pod on its node.
	Unschedulable bool
	// Returning: an old pod of a canary that let its node go (failed,
	// reverted, replaced by a third template). Replacing it returns its
	// node to the template that runs around it, so it waits for no
	// domain's turn nor bake; it still spends the budgets.
	Returning bool
	// InPlace: an old pod whose template differs from this replica set's
	// only in container images, so that patching its images replaces it.
	InPlace bool
	// Updating: a pod whose images were patched in place and whose
	// containers do not all run them yet. It is not ready, whatever its
	// Ready condition says.
	Updating bool
	// Draining: an old pod being taken out of service for an in-place
	// update (its readiness gate closed, its Ready condition not yet
	// False). It is not ready, and its images are patched once it drained.
	Draining bool
	// GateClosed: an old pod whose readiness gate was closed for an
	// in-place update, draining or drained. When the update does not go on,
	// the plan reopens it (Plan.Reopen).
	GateClosed bool
	// ReadySince is when the pod last became ready; zero when not ready.
	ReadySince time.Time
	// CreatedAt orders duplicates: the older pod is kept.
	CreatedAt time.Time
}

// Ready reports whether the pod is ready.
func (p *Pod) Ready() bool {
	return !p.ReadySince.IsZero() && !p.Terminating && !p.Failed && !p.Updating && !p.Draining
}

// Available reports whether the pod has been ready for minReady at now.
func (p *Pod) Available(minReady time.Duration, now time.Time) bool {
	return p.Ready() && !now.Before(p.ReadySince.Add(minReady))
}

// Params are the rollout settings, resolved to numbers.
type Params struct {
	// MaxUnavailable bounds the nodes without an available pod that deleting
	// old pods may cause.
	MaxUnavailable int
	// MaxSurge, when positive, replaces pods by creating the new pod first and
	// deleting the old one once the new one is available, or as soon as the
	// old one is not available either (a node going down), on at most this
	// many nodes at once; deletion under MaxUnavailable is then not used.
	// Pods updated in place are not surged: they spend MaxUnavailable when
	// it is positive, and are surged like the others when it is 0.
	MaxSurge int
	// MaxPodSchedulerFailure is how many unschedulable pods do not count as
	// unavailable.
	MaxPodSchedulerFailure int
	// MinReady is how long a pod must be ready to be available.
	MinReady time.Duration
	// MaxParallelPodCreation caps pods being created (created, not yet ready).
	MaxParallelPodCreation int
	// SlowStartInterval, when positive, switches slow start to additive mode:
	// the creation cap starts at SlowStartIncrease and grows by it every
	// interval since StartedAt, up to MaxParallelPodCreation.
	SlowStartInterval time.Duration
	SlowStartIncrease int
	// StartedAt is when this replica set started rolling out.
	StartedAt time.Time
	// Paused stops replacing old pods; nodes without a pod still get one.
	Paused bool
	// Frozen stops every creation and deletion.
	Frozen bool
	// Topology, when set, replaces old pods domain by domain, each domain
	// under a budget of its own.
	Topology *Topology
}

// Input is the observed state a plan is made from.
type Input struct {
	// Nodes are the nodes this replica set is responsible for, plus, with
	// both flags false, nodes that no longer exist but still hold pods.
	Nodes []Node
	// Pods are the ExtendedDaemonSet's pods on those nodes, keyed by node.
	Pods map[string][]Pod
	// BackoffUntil holds, per node, the time before which a failed pod there
	// is left alone.
	BackoffUntil map[string]time.Time
	Params       Params
	Now          time.Time
	// Elsewhere is what the ExtendedDaemonSet's other replica set spends of
	// the shared budgets on its own nodes: a canary and the active replica
	// set replace pods under one maxUnavailable and one maxSurge.
	Elsewhere Spent
}

// Spent is the share of the budgets in use.
type Spent struct {
	// Unavailable counts desired nodes without an available pod, after
	// the scheduler-failure allowance.
	Unavailable int
	// Surging counts nodes running two pods, whichever replica sets
	// they belong to.
	Surging int
	// Excused counts the unavailable nodes the scheduler-failure allowance
	// excuses: one allowance serves both replica sets, as one budget does.
	Excused int
	// Domains counts Unavailable per domain, with a topology.
	Domains map[string]int
}

// DeleteReason says why a pod is deleted.
type DeleteReason string

const (
	DeleteReplaced   DeleteReason = "Replaced"   // an old pod replaced by the rolling update
	DeleteMisplaced  DeleteReason = "Misplaced"  // its node no longer fits the template, or is gone
	DeleteDuplicate  DeleteReason = "Duplicate"  // another pod of the replica set runs on the node
	DeleteFailed     DeleteReason = "Failed"     // the pod failed and will be recreated
	DeleteSurgeEnded DeleteReason = "SurgeEnded" // the new pod on the node became available
)

// Deletion is a pod to delete and why.
type Deletion struct {
	Pod    string
	Node   string
	Reason DeleteReason
}

// InPlaceUpdate is an old pod whose images are patched to this replica
// set's, which moves it to this replica set.
type InPlaceUpdate struct {
	Pod  string
	Node string
}

// Counts describe the replica set's nodes and pods; status is built on them.
type Counts struct {
	// Desired is the number of nodes that should run a pod.
	Desired int
	// Current, Ready and Available count this replica set's pods that are
	// not terminating, ready, and available.
	Current, Ready, Available int
	// UpToDate is the number of desired nodes whose pod is of this replica
	// set and available, with no old pod left beside it.
	UpToDate int
	// Old is the number of old pods on the nodes (not terminating).
	Old int
	// Unavailable is the number of desired nodes without an available pod,
	// after the scheduler-failure allowance.
	Unavailable int
	// Unschedulable is the number of this replica set's pods the scheduler
	// could not place.
	Unschedulable int
	// Updating is the number of this replica set's pods whose containers do
	// not run its images yet since an in-place update.
	Updating int
	// Excused is the number of unavailable desired nodes the
	// scheduler-failure allowance excuses, out of what the other replica
	// set left of it.
	Excused int
	// Misplaced is the number of pods on nodes that should not run one.
	Misplaced int
	// Surging is the number of nodes running an old and a new pod.
	Surging int
	// SurgeEnding is the number of nodes whose surge ends with this plan:
	// the new pod is available, or neither is, and the old one is deleted
	// now, or the node runs two pods that are not an old and a new one
	// (duplicates, a failed pod beside a live one, two pods of other
	// replica sets, pods on a node that no longer fits) and the extra ones
	// are deleted now.
	SurgeEnding int
	// IgnoredUnresponsive is the number of unresponsive nodes left alone.
	IgnoredUnresponsive int
	// InMaintenance is the number of nodes in maintenance left alone among
	// those whose agent may run there (ShouldContinueRunning), responsive
	// or not.
	InMaintenance int
	// Running counts, as a DaemonSet's status does, the desired nodes
	// (that should run a pod, responsive, not in maintenance) running a
	// live pod of the ExtendedDaemonSet, a ready one and an available one,
	// of this replica set or of one it replaces. Counting nodes rather than
	// pods, none exceeds the desired nodes.
	Running NodeCounts
	// KeptNew and KeptOld count the live pods, of this replica set and of
	// others, on nodes that take no new pod but let running ones stay (an
	// untolerated NoSchedule taint): the plan leaves them alone, so, as
	// for DaemonSets, they must not hold the rollout back.
	KeptNew, KeptOld int
	// Domains describe the domains of the topology, in order; nil without
	// one.
	Domains []DomainCounts
}

// NodeCounts count nodes running a live pod, a ready one, an available one.
type NodeCounts struct {
	Current, Ready, Available int
}

// Spent is the share of the budgets these counts use, as another replica
// set sees it: a surge that ends with this plan holds its node until the
// plan is carried out.
func (c Counts) Spent() Spent {
	return Spent{Unavailable: c.Unavailable, Surging: c.Surging + c.SurgeEnding, Excused: c.Excused, Domains: c.spentByDomain()}
}

// Plan is what to do now, and when to look again.
type Plan struct {
	// Create lists the nodes that get a new pod, most urgent first.
	Create []string
	// Delete lists the pods to delete.
	Delete []Deletion
	// UpdateInPlace lists the old pods updated in place, each replacing its
	// node's pod under MaxUnavailable as a deletion would.
	UpdateInPlace []InPlaceUpdate
	// Reopen lists the old pods whose readiness gate was closed for an
	// in-place update that does not go on now: paused, frozen, not their
	// domain's turn, or on a node that takes no new pod. Opened again, they
	// serve meanwhile rather than wait out of service for as long as that
	// lasts.
	Reopen []string
	// FailedNodes are the nodes whose failed pod is deleted now; their
	// backoff should grow.
	FailedNodes []string
	// RequeueAfter, when positive, is when time alone changes the plan (a
	// pod becoming available after minReadySeconds, a backoff or a slow-start
	// interval ending).
	RequeueAfter time.Duration
	Counts       Counts
}
