package v1alpha1

// Labels the controller puts on the objects it creates, so they can be
// selected without reading owner references.
const (
	// ExtendedDaemonSetNameLabel names the ExtendedDaemonSet a replica set or
	// pod belongs to.
	ExtendedDaemonSetNameLabel = "extendeddaemonset.io/name"
	// ExtendedDaemonSetReplicaSetNameLabel names the replica set a pod belongs to.
	ExtendedDaemonSetReplicaSetNameLabel = "extendeddaemonset.io/replicaset"
	// TemplateHashLabel holds the hash of the pod template a replica set or
	// pod was made from.
	TemplateHashLabel = "extendeddaemonset.io/template-hash"
)

// Annotations that ask the controller for a one-off action. `kubectl eds`
// sets them; each has a declarative twin in the spec for users who drive
// everything from git.
//
// The steering values (validated, failed, unpaused, skip-step and their
// twins) name the canary they act on: its replica set
// (status.canary.replicaSet), or its replica set and instance
// "<replicaSet>@<instance>" (status.canary.instance), as kubectl eds writes
// them. A value acts only on the canary instance it was given for: a value
// already present when a canary starts (left from an earlier canary of the
// same replica set, which a rollback and the template applied again, or a
// retry, reuses) is ignored by it, and so is a value naming another
// instance. To steer a later instance of the same replica set, write a
// value that differs, "<replicaSet>@<instance>" of that instance.
const (
	// CanaryValidatedAnnotation promotes the canary its value names.
	CanaryValidatedAnnotation = "extendeddaemonset.io/canary-validated"
	// CanaryPausedAnnotation pauses the canary while it is "true".
	CanaryPausedAnnotation = "extendeddaemonset.io/canary-paused"
	// CanaryUnpausedAnnotation lets the canary its value names go on
	// despite autoPause, or, "<replicaSet>@<domain>", passes the paused
	// gates before that domain.
	CanaryUnpausedAnnotation = "extendeddaemonset.io/canary-unpaused"
	// CanarySkipStepAnnotation moves a canary with steps on from a step,
	// even before that step's duration passed or while it waits for a
	// person. Its value is "<canary>/<step>" (step from 1), the canary
	// named as above, as kubectl eds canary skip-step writes it, or the
	// bare step number, which the running canary takes at that step. A step
	// other than the current one is left alone, so setting it twice skips
	// one step.
	CanarySkipStepAnnotation = "extendeddaemonset.io/canary-skip-step"
	// CanaryFailedAnnotation fails the canary its value names.
	CanaryFailedAnnotation = "extendeddaemonset.io/canary-failed"
	// CanaryRetryAnnotation starts a failed canary again when its value changes.
	CanaryRetryAnnotation = "extendeddaemonset.io/canary-retry"
	// RollingUpdatePausedAnnotation pauses the rolling update while it is "true".
	RollingUpdatePausedAnnotation = "extendeddaemonset.io/rolling-update-paused"
	// RolloutFrozenAnnotation stops every pod creation while it is "true".
	RolloutFrozenAnnotation = "extendeddaemonset.io/rollout-frozen"
	// OldDaemonSetAnnotation names a DaemonSet in the same namespace whose pods
	// are replaced by rolling update, to migrate without downtime. They are
	// replaced once the DaemonSet is deleted with --cascade=orphan (a live
	// DaemonSet recreates its deleted pods); until then they hold their nodes,
	// a canary's nodes included. Its pods are those it controls and those
	// without a controller that its selector matches (once it is gone, the
	// ExtendedDaemonSet's); a selector naming no label value stands for the
	// template labels, so no other application's pod is ever replaced.
	OldDaemonSetAnnotation = "extendeddaemonset.io/old-daemonset"
	// TemplateHashAnnotation holds the hash of the pod template of a replica set.
	TemplateHashAnnotation = "extendeddaemonset.io/template-hash"
	// RevisionAnnotation numbers the replica sets of an ExtendedDaemonSet in
	// the order they were created: 1 for the first, one more than the highest
	// for each new one. History is pruned oldest first by it; creation
	// timestamps cannot order replica sets made within the same second.
	RevisionAnnotation = "extendeddaemonset.io/revision"
)

// NodeResourcesAnnotationPrefix starts the node annotation that overrides a
// container's resources on that node:
// resources.extendeddaemonset.io/<namespace>.<eds>.<container> with the JSON
// of a core/v1 ResourceRequirements as its value.
const NodeResourcesAnnotationPrefix = "resources.extendeddaemonset.io/"
