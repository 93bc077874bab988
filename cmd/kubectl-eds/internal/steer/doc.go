// Package steer is the kubectl-eds commands that act on a rollout: they
// validate, pause, fail or retry a canary, pause or freeze a rolling
// update through the annotations the controller reads, and show or roll
// back to the replica sets an ExtendedDaemonSet keeps as its history.
//
// Annotations are written with a merge patch of metadata.annotations
// alone, so that a spec kept in git is never touched by them; only
// rollback writes the spec, as a person would.
package steer
