package v1alpha1

import "github.com/fluxcd/pkg/apis/meta"

// Condition types. Ready, Reconciling and Stalled follow the contract that
// kstatus (Flux) and Argo CD health checks read; Canary and Analysis tell a
// person what the current canary is doing.
const (
	ReadyCondition       = meta.ReadyCondition
	ReconcilingCondition = meta.ReconcilingCondition
	StalledCondition     = meta.StalledCondition
	CanaryCondition      = "Canary"
	AnalysisCondition    = "Analysis"
	// ResourceOverridesCondition is False while a node annotation meant to
	// override this ExtendedDaemonSet's container resources is malformed
	// (and so ignored); absent otherwise.
	ResourceOverridesCondition = "ResourceOverrides"
)

// Condition reasons a person can act on.
const (
	// ReasonRolledOut: every desired pod runs the active template and is available.
	ReasonRolledOut = "RolledOut"
	// ReasonRollingUpdate: pods are being replaced by the active template.
	ReasonRollingUpdate = "RollingUpdate"
	// ReasonProgressing: pods are being created or becoming available.
	ReasonProgressing = "Progressing"
	// ReasonCanaryRunning: a canary runs on its nodes and is being judged.
	ReasonCanaryRunning = "CanaryRunning"
	// ReasonCanaryPaused: the canary waits for a person (manual validation,
	// auto-pause or an explicit pause).
	ReasonCanaryPaused = "CanaryPaused"
	// ReasonCanaryFailed: the canary failed; its nodes went back to the active
	// template and the object stays Stalled until the spec changes or a retry.
	ReasonCanaryFailed = "CanaryFailed"
	// ReasonCanaryNodeNotReady: a canary node went NotReady after the
	// canary pod started on it, which the canary may have caused; the
	// canary fails (autoFail) or pauses (autoPause) with this reason in
	// status.canary.reason, and its Canary condition's message names the
	// node.
	ReasonCanaryNodeNotReady = "CanaryNodeNotReady"
	// ReasonWaitingForGate: the canary holds at a confirm-start,
	// confirm-step or confirm-promotion webhook whose receiver has not
	// answered 2xx yet; the message names the gate, since when it waits and
	// its last answer's status code.
	ReasonWaitingForGate = "WaitingForGate"
	// ReasonGateTimedOut: a gate waited its timeout; the canary failed or
	// paused, as its onTimeout says.
	ReasonGateTimedOut = "GateTimedOut"
	// ReasonCanaryPromoted: the canary template became the active one.
	ReasonCanaryPromoted = "CanaryPromoted"
	// ReasonAnalysisPending: no measurement yet (initialDelay).
	ReasonAnalysisPending = "AnalysisPending"
	// ReasonAnalysisRunning: measuring, no verdict yet.
	ReasonAnalysisRunning = "AnalysisRunning"
	// ReasonAnalysisSuccessful: every deciding metric passed its latest measurement.
	ReasonAnalysisSuccessful = "AnalysisSuccessful"
	// ReasonAnalysisFailed: a metric failed beyond its failureLimit.
	ReasonAnalysisFailed = "AnalysisFailed"
	// ReasonAnalysisInconclusive: measurements gave no answer beyond the limit.
	ReasonAnalysisInconclusive = "AnalysisInconclusive"
	// ReasonAnalysisError: measurements failed beyond the limit.
	ReasonAnalysisError = "AnalysisError"
	// ReasonNodeHealthRegressed: nodeHealth metrics whose onRegression is
	// Pause failed, and nothing else did: the canary waits for a person to
	// fail or validate it.
	ReasonNodeHealthRegressed = "NodeHealthRegressed"
	// ReasonInvalidSpec: the spec is invalid in a way the schema cannot catch.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonRolloutFrozen: pod creation is frozen by the user.
	ReasonRolloutFrozen = "RolloutFrozen"
	// ReasonWaitingForOldDaemonSet: the DaemonSet being migrated from still
	// manages its pods; they are replaced once it is deleted with
	// --cascade=orphan.
	ReasonWaitingForOldDaemonSet = "WaitingForOldDaemonSet"
	// ReasonWaitingForWorkload: the DaemonSet a workloadRef names creates
	// pods at another template than the replica set's, which therefore
	// replaces none (a pod it deleted would come back at that template).
	ReasonWaitingForWorkload = "WaitingForWorkload"
	// ReasonRollingUpdatePaused: the rolling update is paused by the user.
	ReasonRollingUpdatePaused = "RollingUpdatePaused"
	// ReasonInactive: a replica set that is neither active nor canary; the
	// active one replaces its pods.
	ReasonInactive = "Inactive"
	// ReasonReconcileFailed: the controller could not carry out its plan
	// (an API call failed); it retries.
	ReasonReconcileFailed = "ReconcileFailed"
	// ReasonMalformedNodeAnnotation: a resource override annotation on a
	// node does not parse and is ignored.
	ReasonMalformedNodeAnnotation = "MalformedNodeAnnotation"
	// ReasonDomainBaking: a domain of a zone-by-zone rolling update is
	// done and bakes; the next domain waits for its bake time and, with a
	// canary analysis, for the bake's analysis to be Successful.
	ReasonDomainBaking = "DomainBaking"
	// ReasonDomainBakeFailed: the analysis judging a domain's bake failed
	// (or erred, or stayed inconclusive) beyond its limits; no further
	// domain starts and nothing is rolled back until the template changes
	// or a retry is asked for.
	ReasonDomainBakeFailed = "DomainBakeFailed"
	// ReasonProgressDeadlineExceeded: the rollout made no progress in time.
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
)
