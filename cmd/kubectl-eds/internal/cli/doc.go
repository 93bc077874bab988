// Package cli is what every command of kubectl-eds shares: kubectl's
// connection flags (--kubeconfig, --context, -n, ...), a client that knows
// the ExtendedDaemonSet kinds, the namespace to act in, completion of
// ExtendedDaemonSet names, exit codes, and what an ExtendedDaemonSet rolls
// out (CurrentTemplate, PodsOf): its own template and pods, or those of the
// DaemonSet its workloadRef names.
package cli
