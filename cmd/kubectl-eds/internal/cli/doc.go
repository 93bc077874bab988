// Package cli is what every command of kubectl-eds shares: kubectl's
// connection flags (--kubeconfig, --context, -n, ...), a client that knows
// the ExtendedDaemonSet kinds, the namespace to act in, completion of
// ExtendedDaemonSet names, and exit codes.
package cli
