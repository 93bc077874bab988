// Package inspect is the read-only commands of kubectl-eds: get and get-ers
// list ExtendedDaemonSets and their replica sets as `kubectl get` would,
// status tells how a rollout stands (and, watched, how it ends, in its exit
// code), and pods lists an ExtendedDaemonSet's pods with the part each
// plays in the rollout.
package inspect
