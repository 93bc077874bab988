package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ExtendedDaemonSetStrategy says how a new pod template reaches the nodes.
type ExtendedDaemonSetStrategy struct {
	// RollingUpdate sets how pods are replaced once a template is active.
	// +kubebuilder:default={}
	// +optional
	RollingUpdate RollingUpdateStrategy `json:"rollingUpdate,omitempty"`

	// Canary, when set, runs every new template on a few canary nodes first
	// and promotes or fails it before the rolling update. Without it a new
	// template is rolled out to every node at once.
	// +optional
	Canary *CanaryStrategy `json:"canary,omitempty"`
}

// RollingUpdateType names how a pod is replaced.
// +kubebuilder:validation:Enum=Standard;InPlaceIfPossible
type RollingUpdateType string

const (
	// RollingUpdateStandard deletes the old pod and creates the new one.
	RollingUpdateStandard RollingUpdateType = "Standard"
	// RollingUpdateInPlaceIfPossible patches the container images of the
	// running pod when only images changed, and falls back to Standard otherwise.
	RollingUpdateInPlaceIfPossible RollingUpdateType = "InPlaceIfPossible"
)

const (
	// InPlaceUpdatedFromAnnotation, on a pod, names the replica set the pod
	// belonged to before its images were updated in place.
	InPlaceUpdatedFromAnnotation = "extendeddaemonset.io/in-place-updated-from"
	// InPlaceUpdateReadyCondition is the pod readiness gate of
	// inPlaceReadinessGate: False while the pod's images are being replaced.
	InPlaceUpdateReadyCondition = "extendeddaemonset.io/in-place-update-ready"
)

// RollingUpdateStrategy bounds how fast pods are replaced.
// +kubebuilder:validation:XValidation:rule="!(has(self.maxUnavailable) && has(self.maxSurge) && string(self.maxUnavailable) in ['0', '0%'] && string(self.maxSurge) in ['0', '0%'])",message="maxUnavailable and maxSurge cannot both be zero: the rolling update could never make progress",fieldPath=".maxUnavailable"
type RollingUpdateStrategy struct {
	// Type is how a pod is replaced: Standard (delete, then create) or
	// InPlaceIfPossible. InPlaceIfPossible patches the images of a running
	// pod, and moves it to the new replica set, when the new template differs
	// from the pod's only in container and init container images; any other
	// change replaces the pod as Standard does. A pod updated in place counts
	// as unavailable, under maxUnavailable, from the patch until its
	// containers report the new images and it has been ready for
	// minReadySeconds. maxSurge does not apply to it: a surge needs a second
	// pod. With maxUnavailable 0, pods are surged instead. A canary replaces
	// its pods as Standard does: it is judged by their restarts, and an
	// update in place restarts a pod that carries restarts of its own.
	// +kubebuilder:default=Standard
	// +optional
	Type RollingUpdateType `json:"type,omitempty"`

	// MaxUnavailable is the largest number (or percentage of desired pods,
	// rounded up) of pods that may be unavailable during the update.
	// +kubebuilder:default=1
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",message="maxUnavailable must be an integer >= 0 or a percentage between 0% and 100%"
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// MaxSurge is the largest number (or percentage of desired pods, rounded
	// up) of nodes that may run an old and a new pod at once. The new pod is
	// created first and the old one is deleted once the new one is available,
	// or at once when neither is (a node gone down mid-surge), which costs
	// no availability. Pods updated in place (type InPlaceIfPossible) are not surged: they
	// spend maxUnavailable, unless it is 0.
	// +kubebuilder:default=0
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",message="maxSurge must be an integer >= 0 or a percentage between 0% and 100%"
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`

	// MaxParallelPodCreation caps the number of pods created at once. Slow
	// start doubles the batch (1, 2, 4, ...) up to this cap.
	// +kubebuilder:default=250
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxParallelPodCreation *int32 `json:"maxParallelPodCreation,omitempty"`

	// SlowStartIntervalDuration switches slow start to additive mode: every
	// interval, the batch grows by SlowStartAdditiveIncrease. Unset means
	// doubling batches with no fixed interval.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="slowStartIntervalDuration must be a positive duration"
	// +optional
	SlowStartIntervalDuration *metav1.Duration `json:"slowStartIntervalDuration,omitempty"`

	// SlowStartAdditiveIncrease is how much the batch grows every
	// SlowStartIntervalDuration (number, or percentage of desired pods).
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 1 : self.matches('^(100|[1-9][0-9]?)%$')",message="slowStartAdditiveIncrease must be an integer >= 1 or a percentage between 1% and 100%"
	// +optional
	SlowStartAdditiveIncrease *intstr.IntOrString `json:"slowStartAdditiveIncrease,omitempty"`

	// MaxPodSchedulerFailure is how many pods (or percentage of desired pods)
	// may stay unschedulable without counting against maxUnavailable, so a few
	// full nodes do not block the rollout.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",message="maxPodSchedulerFailure must be an integer >= 0 or a percentage between 0% and 100%"
	// +optional
	MaxPodSchedulerFailure *intstr.IntOrString `json:"maxPodSchedulerFailure,omitempty"`

	// InPlaceReadinessGate, with type InPlaceIfPossible, creates pods with
	// the readiness gate extendeddaemonset.io/in-place-update-ready. The
	// controller turns it False before it patches a pod's images, so that the
	// pod leaves Service endpoints before its containers restart, and True
	// once the new containers are ready; or True again, its images untouched,
	// when the update does not go on (the rollout paused or frozen, another
	// domain's turn), so that the pod serves meanwhile. A gate can only be
	// set when a pod is created: pods created without it are updated
	// without this step.
	// +optional
	InPlaceReadinessGate bool `json:"inPlaceReadinessGate,omitempty"`

	// Paused stops replacing pods; pods on new nodes are still created. The
	// annotation extendeddaemonset.io/rolling-update-paused does the same.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// Frozen stops every pod creation and deletion of the rollout. The
	// annotation extendeddaemonset.io/rollout-frozen does the same.
	// +optional
	Frozen bool `json:"frozen,omitempty"`

	// Topology, when set, rolls the update out domain by domain (zone by
	// zone, for example) with a budget per domain.
	// +optional
	Topology *RollingUpdateTopology `json:"topology,omitempty"`
}

// CanaryValidationMode says who promotes a canary.
// +kubebuilder:validation:Enum=auto;manual
type CanaryValidationMode string

const (
	// CanaryValidationAuto promotes the canary once its duration has elapsed
	// and its checks passed.
	CanaryValidationAuto CanaryValidationMode = "auto"
	// CanaryValidationManual promotes the canary only when a person validates it.
	CanaryValidationManual CanaryValidationMode = "manual"
)

// DefaultCanaryDuration is how long an auto canary runs when duration is unset.
// It lives in code, not in the schema, because manual canaries take no duration.
const DefaultCanaryDuration = "10m"

// The canary's restart checks when a spec leaves them out, the original
// ExtendedDaemonSet project's: autoPause above 2 restarts, autoFail above 5,
// and no promotion while a canary container restarted in the last 5 minutes
// (at most the duration). The schema markers of CanaryAutoPause and
// CanaryAutoFail repeat the restart counts; the controller judges an object
// stored without them with these same values.
const (
	DefaultAutoPauseMaxRestarts int32 = 2
	DefaultAutoFailMaxRestarts  int32 = 5
	DefaultNoRestartsDuration         = "5m"
)

// CanaryStrategy runs a new template on a few nodes before everyone else.
// +kubebuilder:validation:XValidation:rule="!has(self.validationMode) || self.validationMode != 'manual' || (!has(self.duration) && !has(self.noRestartsDuration))",message="duration and noRestartsDuration cannot be set with validationMode manual: a manual canary runs until it is validated (use autoFail.canaryTimeout to bound it)"
// +kubebuilder:validation:XValidation:rule="!has(self.autoFail) || !has(self.autoPause) || !has(self.autoFail.maxRestarts) || !has(self.autoPause.maxRestarts) || self.autoFail.maxRestarts >= self.autoPause.maxRestarts",message="autoFail.maxRestarts must be greater than or equal to autoPause.maxRestarts"
// +kubebuilder:validation:XValidation:rule="has(self.steps) || !has(self.autoFail) || !has(self.autoFail.canaryTimeout) || duration(self.autoFail.canaryTimeout) > duration(has(self.duration) ? self.duration : '10m') || (has(self.validationMode) && self.validationMode == 'manual')",message="autoFail.canaryTimeout must be longer than duration (10m when unset)"
// +kubebuilder:validation:XValidation:rule="has(self.steps) || !has(self.noRestartsDuration) || duration(self.noRestartsDuration) <= duration(has(self.duration) ? self.duration : '10m')",message="noRestartsDuration must not be longer than duration (10m when unset)"
// +kubebuilder:validation:XValidation:rule="!has(self.steps) || (!has(self.replicas) && !has(self.duration))",message="replicas and duration cannot be set with steps: each step has its own"
// +kubebuilder:validation:XValidation:rule="!has(self.steps) || !has(self.validationMode) || self.validationMode != 'manual'",message="steps cannot be used with validationMode manual: end the steps with a pause: true step to wait for a person"
// +kubebuilder:validation:XValidation:rule="!has(self.steps) || !has(self.noRestartsDuration) || self.steps.all(s, !has(s.duration) || duration(s.duration) >= duration(self.noRestartsDuration))",message="noRestartsDuration must not be longer than the duration of any step"
// +kubebuilder:validation:XValidation:rule="!has(self.steps) || !has(self.autoFail) || !has(self.autoFail.canaryTimeout) || !self.steps.exists(s, has(s.duration)) || duration(self.autoFail.canaryTimeout) > self.steps.filter(s, has(s.duration)).map(s, duration(s.duration)).sum()",message="autoFail.canaryTimeout must be longer than the durations of the steps together"
type CanaryStrategy struct {
	// Replicas is the number of canary nodes, or a percentage of the desired
	// nodes rounded up (1 when unset). Not allowed with steps. It has no
	// schema default, which would make it set alongside steps.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 1 : self.matches('^(100|[1-9][0-9]?)%$')",message="canary replicas must be an integer >= 1 or a percentage between 1% and 100%"
	// +optional
	Replicas *intstr.IntOrString `json:"replicas,omitempty"`

	// Duration is how long an auto canary runs before it can be promoted
	// (10m when unset). Not allowed with validationMode manual.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="duration must be a positive duration"
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`

	// NoRestartsDuration is the final part of Duration during which no canary
	// container may restart for the canary to be promoted (with steps, of
	// each step's duration). Unset, it is 5m, or the duration when that is
	// shorter, unless autoPause and autoFail are both disabled: then
	// restarts hold nothing.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="noRestartsDuration must be a positive duration"
	// +optional
	NoRestartsDuration *metav1.Duration `json:"noRestartsDuration,omitempty"`

	// Steps grow the canary in stages, each judged on its own; the canary
	// is promoted after the last one. Without steps the canary is one step
	// of replicas nodes for duration. Steps must not shrink: a step that
	// resolves to fewer nodes than the one before stalls the
	// ExtendedDaemonSet with reason InvalidSpec (a count and a percentage
	// compare only once the nodes are known, and a schema rule ordering
	// the list costs more than the API server allows). Meanwhile the canary
	// keeps its nodes and is still judged: fail, autoFail, canaryTimeout
	// and its analysis fail it as usual.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	// +listType=atomic
	// +optional
	Steps []CanaryStep `json:"steps,omitempty"`

	// NodeSelector restricts canary nodes to the nodes it matches.
	// +optional
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`

	// NodeAntiAffinityKeys are node label keys whose values canary nodes are
	// spread across (for example one canary per zone).
	// +listType=set
	// +optional
	NodeAntiAffinityKeys []string `json:"nodeAntiAffinityKeys,omitempty"`

	// ValidationMode is auto (promote once Duration elapsed and the checks
	// passed) or manual (promote only when validated).
	// +kubebuilder:default=auto
	// +optional
	ValidationMode CanaryValidationMode `json:"validationMode,omitempty"`

	// AutoPause pauses the canary when its pods look unhealthy, so a person
	// can look before it fails. On by default (more than 2 restarts of a
	// canary container pauses it): set enabled false to turn it off.
	// +kubebuilder:default={}
	// +optional
	AutoPause *CanaryAutoPause `json:"autoPause,omitempty"`

	// AutoFail fails the canary when its pods are clearly broken or it runs
	// too long; the canary nodes then go back to the active template. On by
	// default (more than 5 restarts of a canary container fails it): set
	// enabled false to turn it off.
	// +kubebuilder:default={}
	// +optional
	AutoFail *CanaryAutoFail `json:"autoFail,omitempty"`

	// Analysis judges the canary by Prometheus metrics or web requests;
	// promotion then also needs the analysis to succeed.
	// +optional
	Analysis *CanaryAnalysis `json:"analysis,omitempty"`

	// Webhooks ask systems of the user's before the canary goes on
	// (confirm-start, confirm-step, confirm-promotion gates) and tell them
	// what happened (event, rollback). See CanaryWebhook.
	// +kubebuilder:validation:MaxItems=10
	// +listType=map
	// +listMapKey=name
	// +optional
	Webhooks []CanaryWebhook `json:"webhooks,omitempty"`

	// Paused holds the canary where it is while true: no promotion, no
	// automatic failure except canaryTimeout. Declarative twin of the
	// extendeddaemonset.io/canary-paused annotation.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// Validate promotes the canary this value names: its replica set
	// (status.canary.replicaSet), or "<replicaSet>@<instance>"
	// (status.canary.instance). A value already set when a canary starts
	// was given to an earlier one and does not act on it: to validate a
	// later canary of the same replica set, name its instance. Declarative
	// twin of the extendeddaemonset.io/canary-validated annotation.
	// +optional
	Validate string `json:"validate,omitempty"`

	// Unpause lets the canary this value names (as for validate) go on
	// despite autoPause (a person has looked and accepts it); written
	// "<replicaSet>@<domain>", it passes the gates before that domain of
	// the replica set's rolling update that paused it. Declarative twin of
	// the extendeddaemonset.io/canary-unpaused annotation.
	// +optional
	Unpause string `json:"unpause,omitempty"`

	// SkipStep moves the canary on from one of its steps: "<canary>/<step
	// number>", the canary named as for validate; for example
	// "foo-x7k2p/2" skips step 2 of the canary foo-x7k2p, once. Declarative
	// twin of the extendeddaemonset.io/canary-skip-step annotation.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(@[a-z0-9]+)?/[1-9][0-9]?$`
	// +optional
	SkipStep string `json:"skipStep,omitempty"`

	// Fail fails the canary this value names (as for validate).
	// Declarative twin of the extendeddaemonset.io/canary-failed annotation.
	// +optional
	Fail string `json:"fail,omitempty"`

	// Retry starts a failed canary again each time this value changes (any
	// token, for example a date). Declarative twin of the
	// extendeddaemonset.io/canary-retry annotation.
	// +optional
	Retry string `json:"retry,omitempty"`
}

// CanaryAutoPause pauses an unhealthy canary.
type CanaryAutoPause struct {
	// Enabled turns automatic pausing on.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// MaxRestarts is the number of canary container restarts above which the
	// canary pauses.
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxRestarts *int32 `json:"maxRestarts,omitempty"`

	// MaxSlowStartDuration is how long a canary pod may take to start (or
	// wait for a reason such as ImagePullBackOff) before the canary pauses.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="maxSlowStartDuration must be a positive duration"
	// +optional
	MaxSlowStartDuration *metav1.Duration `json:"maxSlowStartDuration,omitempty"`
}

// CanaryAutoFail fails a broken canary.
type CanaryAutoFail struct {
	// Enabled turns automatic failing on.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// MaxRestarts is the number of canary container restarts above which the
	// canary fails.
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxRestarts *int32 `json:"maxRestarts,omitempty"`

	// MaxRestartsDuration fails the canary when a canary container keeps
	// restarting for longer than this.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="maxRestartsDuration must be a positive duration"
	// +optional
	MaxRestartsDuration *metav1.Duration `json:"maxRestartsDuration,omitempty"`

	// CanaryTimeout fails a canary that is still not promoted after this long,
	// so a paused canary cannot wait forever. With validationMode manual it
	// bounds the wait for validation.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="canaryTimeout must be a positive duration"
	// +optional
	CanaryTimeout *metav1.Duration `json:"canaryTimeout,omitempty"`
}
