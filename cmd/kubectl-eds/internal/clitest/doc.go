// Package clitest runs kubectl-eds commands in the test process against a
// real API server (envtest) with the real controllers, and a kubelet
// played in the process: pods of ExtendedDaemonSets are bound to their
// node and reported Running and Ready, or crash-looping when an image's
// tag says so, and terminating pods go away. RunDaemonSet plays the
// DaemonSet controller for a DaemonSet an ExtendedDaemonSet's workloadRef
// names: its revisions, its status, and a pod of the current revision on
// every node that lacks one.
package clitest
