// Package store is what a reconcile pass sees, for every reconciler of
// package controllers: the informer cache trimmed to what they read
// (CacheOptions), its indexes and the reads through them (Store reads the
// pods and nodes in place), the expectations of pod writes the cache does
// not show yet (Expectations), the predicates that keep node and pod
// events that change nothing from waking a reconcile, the settings lookup,
// the mapping of listed objects to reconcile requests, and what a
// workloadRef names (the DaemonSet, its current revision and its pods, taken
// for pods of the replica set of their revision).
//
// It may import the API types, Flux's runtime, controller-runtime and the
// placement and overrides packages. It never imports package controllers,
// nor rollout, canary, bake or analysis: a reconciler's own reading of what
// it sees (a pod as the planner takes it, which replica sets a pod event
// wakes) stays with that reconciler. The linter (depguard) holds this.
package store
