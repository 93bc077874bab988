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
//   - no promotion before the canary duration has passed, nor without a
//     Successful analysis when one is configured, unless a person validated
//     the canary;
//   - no change of an ExtendedDaemonSet's spec by the controller;
//   - no pod of a failed canary template outside the canary's nodes.
//
// The Checker holds the rules as a pure function of the objects it is shown,
// so each rule is tested by breaking it on purpose. The Monitor feeds it from
// watches and keeps a timeline of what it saw, for the failure message.
package invariants
