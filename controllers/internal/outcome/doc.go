// Package outcome is how a reconcile pass ends, for every reconciler of
// package controllers: the condition contract (Progress, written as the
// Ready, Reconciling and Stalled conditions by Apply), the errors that stall
// an object instead of being retried (Stalling), the status patch that
// refuses a stale read (PatchStatus), the pacing of status writes that
// change counters alone (StatusWrites), and the requeue helpers.
//
// It may import the API types, Flux's runtime and controller-runtime. It
// never imports package controllers, nor the decision packages (rollout,
// canary, bake) or analysis: what it holds is shared by the reconcilers,
// and decides nothing of a rollout. The linter (depguard) holds this.
package outcome
