// Package invariants watches a namespace of a live cluster and fails on the
// first moment a rollout breaks a promise the controller makes, whatever
// the test around it asserts:
//
//   - no more nodes without an available agent than maxUnavailable allows,
//     canary and rolling update together, counting only what a rollout
//     took down (an agent that turned unready by itself is not the
//     controller's doing, but the controller must not add to it);
//   - no node with two pods of one ExtendedDaemonSet outside a surge, and no
//     more surging nodes than maxSurge allows;
//   - no promotion of a canary instance (its replica set from one start:
//     the same template applied again, or a retry, starts another), nor of
//     a step, before it ran its duration (or its step's) since its own
//     start, nor without its analysis seen pass since then when one is
//     configured, unless a person validated that instance (or skipped that
//     step) since it started: a value left from an earlier canary counts
//     for nothing; no promotion of a replica set with no canary of it
//     running; and, unless a person validated it, none of a canary that
//     lacked an available pod on a Ready node on any of its canary nodes as
//     it was promoted (a canary whose node died ran on nothing there);
//   - no change of an ExtendedDaemonSet's spec by the controller;
//   - no pod of a failed canary template outside the canary's nodes;
//   - no canary pod created on a node in maintenance (placement.Maintenance:
//     draining, cordoned, disrupted, going away), unless it entered
//     maintenance too recently for the controller to know; and a node in
//     maintenance counts against no budget above;
//   - every change of template or steering value ends, Ready, Stalled or
//     waiting for a person, within what the spec allows
//     (progressDeadlineSeconds, the canary's duration or steps, its
//     analysis, a domain's bake) plus a reaction delay, counted from the
//     last thing that moved: the change, a node gaining an available pod of
//     a replica set for the first time since (a pod that flaps is no
//     progress), a node changing, a container of the running canary
//     restarting. The default progress deadline of 600s keeps the rule
//     quiet in tests shorter than that; a test that wants it to bite sets a
//     short one.
//
// An agent that fails on its own, or is evicted (its DisruptionTarget
// condition True), is not the rollout's doing; the rollout may not add to
// it beyond the budget once it could have seen it.
//
// The Checker holds the rules as a pure function of the objects it is shown,
// so each rule is tested by breaking it on purpose. The Monitor feeds it from
// watches and keeps a timeline of what it saw, for the failure message.
package invariants
