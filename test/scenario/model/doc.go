// Package model plays sequences of scenario actions on an in-memory
// cluster through the controller's real decisions, and checks the
// promises of an ExtendedDaemonSet after every step.
//
// The cluster is plain data: nodes (zone label, Ready condition, cordon,
// a DrainInProgress condition, Karpenter's disruption taint),
// pods (phase, Ready condition, restarts), one ExtendedDaemonSet (spec,
// annotations, status), its replica sets, and optionally the DaemonSet it
// takes over. A fake clock moves in ticks; at each tick a simulated
// kubelet starts the pods created before (Running and Ready, unless the
// sequence holds it back), removes the pods deleted on Ready nodes, keeps
// crash-looping containers restarting, and the controller passes run.
//
// With Config.Workload the ExtendedDaemonSet has no template: its
// workloadRef names a DaemonSet updated OnDelete (workload.go), whose
// template the template changes, reverts and rollbacks write. A simulated
// DaemonSet controller, at each tick after the kubelet, records that
// template as the current revision (until then the ExtendedDaemonSet's
// pass fails, as store.CurrentRevision makes it) and creates a pod at it,
// labelled with its revision's hash, on every node that should run one and
// has none, terminating ones included; it never deletes. Only a change of
// the DaemonSet's status, which it computes as its controller does, wakes
// the controller's passes (besides their requeues): no watch of theirs
// sees the DaemonSet's pods. A pod carrying the DaemonSet's labels and
// revision hash but no controller stands beside them, for the controller
// to leave alone. Surge, the handover, a selector of its own, in-place
// updates and settings are refused with a workloadRef, and off. The
// promises hold there too, the DaemonSet's pods being the agents (the only
// pods the controller may delete), plus two of that mode's own: a pod is
// deleted only where the template the DaemonSet brings it back at is
// allowed (the active replica set's, or the running canary's on its
// nodes); and once a canary fails, no pod is deleted on a node outside it
// until the DaemonSet's template changes or a person asks for a retry.
//
// The decisions are the real ones: canary.Step (with canary.ReadyAt, and
// canary.WaitingForNodesPastDeadline for the end of a canary), the roles
// (canary.RoleOf, canary.Running) and the canary's spread (canary.Spread),
// rollout.Compute for every replica set and for the budget spent by the
// other one, bake.Step and bake.Settle, placement.NewFitter,
// placement.Unresponsive, placement.UnresponsiveIn, placement.TargetNode and
// placement.ReadySince; steering values are formed by canary.SteeringValue
// and canary.SkipValue, as kubectl eds forms them.
// What is mirrored is the glue package controllers builds their inputs
// with, which is unexported there; each mirror names the function it
// copies (glue.go, workload.go), and is where the model can drift from
// the controller:
//
//   - reconcile (extendeddaemonset_controller.go), currentReplicaSet and
//     newReplicaSet (extendeddaemonset_replicasets.go), bakeJudging
//     (extendeddaemonset_bake.go);
//   - chooseActive, stepCanary, canaryInput, observeCanary and availableOnEvery
//     (extendeddaemonset_canary.go);
//   - observe, addNodes, addPods, rolloutPod and rolloutParams
//     (replicaset_observe.go), oldDaemonSetPods, orphanSelector and
//     namesALabelValue (replicaset_handover.go), responsibleFor and
//     returnsAtOnce (replicaset_roles.go), spentElsewhere and spentBy
//     (replicaset_budget.go), topologyParams and judgeBakes
//     (replicaset_topology.go), Reconcile (replicaset_controller.go),
//     view.restate's count of fitting nodes and view.untilUnresponsive
//     (replicaset_view.go), act's creations left to the DaemonSet
//     (replicaset_act.go). The model states every node at every pass, as
//     a view stated afresh does; the views a replica set keeps from pass
//     to pass are checked against those by the controllers' own tests.
//     The planner state a replica set keeps is not mirrored but run: each
//     pass tells it only of the nodes whose statement changed, and
//     IncrementalPlan checks that it plans as Compute;
//   - with a workloadRef: currentRevision and podsOf
//     (extendeddaemonset_workload.go), podsOf, templateOr and waiting
//     (replicaset_workload.go), CurrentRevision, DaemonSetPods and
//     WorkloadReplicaSetName (internal/store/workload.go);
//   - setReplicaSetStatus and replicaSetProgress
//     (replicaset_status.go), markProgress and progressed
//     (replicaset_deadline.go), Progress.WaitsForProgress
//     (internal/outcome/progress.go);
//   - stepBake (extendeddaemonset_bake.go), sumReplicaSets
//     (extendeddaemonset_status.go);
//   - what ends a rollout (Ready, Stalled, or waiting for a person)
//     follows extendedDaemonSetProgress, canaryProgress, activeProgress
//     and withBakeMessage (extendeddaemonset_status.go).
//
// The passes run in one of the orders the controller's events allow: the
// ExtendedDaemonSet's, then each replica set's, oldest first, again until
// nothing changes. A node that turns NotReady gets the unreachable taints
// a node lifecycle controller gives it, unless Config.Untainted says the
// cluster has none (as the simulated cluster).
//
// Left out: in-place updates (markInPlace is not mirrored, so the InPlace
// setting sets the spec field and the planner replaces pods as Standard),
// failure backoff (no pod of the model ends in phase Failed), expectations
// and cache lag (the model's writes are seen at once), resource overrides,
// history pruning, webhooks (no canary of the model has a gate), and the
// analysis queries: a canary's analysis concludes
// what the sequence's verdict says, at the time it says, and passes two
// minutes after its pods are ready when the sequence says nothing; a bake's
// analysis always passes. With a workloadRef: a DaemonSet missing or not
// OnDelete (the spec errors of store.DaemonSetOf), a DaemonSet controller
// that sees a template later than the ExtendedDaemonSet's controller does,
// and the DaemonSet controller's own deletions (failed pods, pods on nodes
// they no longer fit).
package model
