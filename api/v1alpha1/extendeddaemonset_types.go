package v1alpha1

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ExtendedDaemonSetSpec is the desired state of an ExtendedDaemonSet.
// +kubebuilder:validation:XValidation:rule="!has(self.template) || !has(self.template.spec) || !has(self.template.spec.restartPolicy) || self.template.spec.restartPolicy == 'Always'",message="template.spec.restartPolicy must be Always: node agents run until they are replaced",fieldPath=".template.spec.restartPolicy"
// +kubebuilder:validation:XValidation:rule="!has(self.template) || !has(self.template.spec) || !has(self.template.spec.nodeName) || size(self.template.spec.nodeName) == 0",message="template.spec.nodeName must be empty: the controller puts one pod on every node the template fits; choose nodes with nodeSelector or affinity",fieldPath=".template.spec.nodeName"
// +kubebuilder:validation:XValidation:rule="!has(self.selector) || !has(self.selector.matchLabels) || (has(self.template) && has(self.template.metadata) && has(self.template.metadata.labels) ? self.selector.matchLabels.all(k, k in self.template.metadata.labels && self.template.metadata.labels[k] == self.selector.matchLabels[k]) : size(self.selector.matchLabels) == 0)",message="selector.matchLabels must match template.metadata.labels",fieldPath=".selector"
// +kubebuilder:validation:XValidation:rule="!has(self.selector) || !has(self.selector.matchExpressions) || self.selector.matchExpressions.all(e, has(self.template) && has(self.template.metadata) && has(self.template.metadata.labels) ? (e.operator == 'In' ? (e.key in self.template.metadata.labels && self.template.metadata.labels[e.key] in e.values) : e.operator == 'NotIn' ? !(e.key in self.template.metadata.labels && self.template.metadata.labels[e.key] in e.values) : e.operator == 'Exists' ? e.key in self.template.metadata.labels : !(e.key in self.template.metadata.labels)) : (e.operator == 'NotIn' || e.operator == 'DoesNotExist'))",message="selector.matchExpressions must match template.metadata.labels",fieldPath=".selector"
// +kubebuilder:validation:XValidation:rule="has(self.workloadRef) || (has(self.template) && has(self.template.spec) && has(self.template.spec.containers) && size(self.template.spec.containers) > 0)",message="template.spec.containers is required unless workloadRef names the DaemonSet whose pods are rolled out",fieldPath=".template"
// +kubebuilder:validation:XValidation:rule="!has(self.workloadRef) || !(has(self.template) && has(self.template.spec) && has(self.template.spec.containers) && size(self.template.spec.containers) > 0)",message="template and workloadRef cannot both be set: with workloadRef, the DaemonSet's own template is rolled out; leave template empty",fieldPath=".workloadRef"
// +kubebuilder:validation:XValidation:rule="!has(self.workloadRef) || !has(self.selector)",message="selector cannot be set with workloadRef: the DaemonSet's selector chooses its pods",fieldPath=".selector"
// +kubebuilder:validation:XValidation:rule="!has(self.workloadRef) || !has(self.strategy) || !has(self.strategy.rollingUpdate) || !has(self.strategy.rollingUpdate.maxSurge) || string(self.strategy.rollingUpdate.maxSurge) in ['0', '0%']",message="strategy.rollingUpdate.maxSurge must be 0 with workloadRef: the DaemonSet creates its pods itself, one per node, so no pod can run beside the one it replaces",fieldPath=".strategy.rollingUpdate.maxSurge"
// +kubebuilder:validation:XValidation:rule="!has(self.workloadRef) || !has(self.strategy) || !has(self.strategy.rollingUpdate) || !has(self.strategy.rollingUpdate.type) || self.strategy.rollingUpdate.type == 'Standard'",message="strategy.rollingUpdate.type must be Standard with workloadRef: the controller only deletes the DaemonSet's pods, for it to recreate them; it cannot update them in place",fieldPath=".strategy.rollingUpdate.type"
// +kubebuilder:validation:XValidation:rule="has(self.workloadRef) == has(oldSelf.workloadRef) && (!has(self.workloadRef) || self.workloadRef == oldSelf.workloadRef)",message="workloadRef cannot be added, removed or changed: create another ExtendedDaemonSet",fieldPath=".workloadRef"
type ExtendedDaemonSetSpec struct {
	// Selector selects the pods of this ExtendedDaemonSet; it must match the
	// template labels. Unset means the template labels.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="selector is immutable: create a new ExtendedDaemonSet to change it"
	// +optional
	Selector *LabelSelector `json:"selector,omitempty"`

	// Template is the pod that runs on every eligible node. Leave it empty
	// when workloadRef names the workload whose pods are rolled out.
	// +optional
	Template corev1.PodTemplateSpec `json:"template,omitempty"`

	// WorkloadRef names an existing DaemonSet of the same namespace whose
	// pods this ExtendedDaemonSet rolls out, instead of a template of its
	// own. The DaemonSet keeps its template and creates its pods; it must
	// use updateStrategy OnDelete, and the controller deletes its pods on
	// the canary's nodes, then on every node within the budgets, for it to
	// recreate them at its current template. The controller never writes
	// the DaemonSet.
	// +optional
	WorkloadRef *WorkloadRef `json:"workloadRef,omitempty"`

	// Strategy says how a new template reaches the nodes.
	// +kubebuilder:default={}
	// +optional
	Strategy ExtendedDaemonSetStrategy `json:"strategy,omitempty"`

	// MinReadySeconds is how long a new pod must be ready before it counts as
	// available.
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`

	// RevisionHistoryLimit is the number of old replica sets kept to roll
	// back to quickly.
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=0
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// ProgressDeadlineSeconds is how long a rollout, or a canary waiting for
	// its pods or for nodes to run on, may go without progress (a pod
	// created, becoming available or replaced; a canary node found) before
	// the ExtendedDaemonSet is Stalled with reason ProgressDeadlineExceeded. The condition clears on the next progress;
	// the rollout itself goes on trying.
	// +kubebuilder:default=600
	// +kubebuilder:validation:Minimum=1
	// +optional
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`
}

// WorkloadRef names a workload of the same namespace.
type WorkloadRef struct {
	// APIVersion of the workload: apps/v1.
	// +kubebuilder:validation:Enum=apps/v1
	// +required
	APIVersion string `json:"apiVersion"`
	// Kind of the workload: DaemonSet.
	// +kubebuilder:validation:Enum=DaemonSet
	// +required
	Kind string `json:"kind"`
	// Name of the workload.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// ExtendedDaemonSetState is a one-word summary for printer columns.
type ExtendedDaemonSetState string

const (
	StateRunning       ExtendedDaemonSetState = "Running"
	StateRollingUpdate ExtendedDaemonSetState = "RollingUpdate"
	StateCanary        ExtendedDaemonSetState = "Canary"
	StateCanaryPaused  ExtendedDaemonSetState = "CanaryPaused"
	StateCanaryFailed  ExtendedDaemonSetState = "CanaryFailed"
	StateFrozen        ExtendedDaemonSetState = "Frozen"
	StateError         ExtendedDaemonSetState = "Error"
)

// ExtendedDaemonSetStatus is the observed state of an ExtendedDaemonSet.
type ExtendedDaemonSetStatus struct {
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, Reconciling, Stalled, Canary and Analysis.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Desired is the number of nodes that should run a pod.
	// +optional
	Desired int32 `json:"desired"`
	// Current is the number of desired nodes that run a pod, of whichever
	// template: counting nodes, no counter exceeds Desired.
	// +optional
	Current int32 `json:"current"`
	// Ready is the number of desired nodes that run a ready pod.
	// +optional
	Ready int32 `json:"ready"`
	// Available is the number of desired nodes that run a pod ready for at
	// least minReadySeconds.
	// +optional
	Available int32 `json:"available"`
	// UpToDate is the number of desired nodes whose only pod is an
	// available pod of the newest template.
	// +optional
	UpToDate int32 `json:"upToDate"`

	// ActiveReplicaSet is the replica set whose template runs on every node.
	// +optional
	ActiveReplicaSet string `json:"activeReplicaSet,omitempty"`

	// Canary describes the running, paused or failed canary, if any.
	// +optional
	Canary *CanaryStatus `json:"canary,omitempty"`

	// Domains are the domains of a zone-by-zone rolling update, as the
	// active replica set states them, with the verdict of each domain's
	// bake analysis.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	Domains []DomainStatus `json:"domains,omitempty"`

	// Bake is the analysis judging the bake of the current domain of a
	// zone-by-zone rolling update, or of the last one that baked.
	// +optional
	Bake *DomainBakeStatus `json:"bake,omitempty"`

	// DomainGate is where the confirm-step gates before the domains of a
	// Sequential zone-by-zone rolling update stand: the domain they hold
	// back, or the last one they let start.
	// +optional
	DomainGate *DomainGateStatus `json:"domainGate,omitempty"`

	// State is a one-word summary: Running, RollingUpdate, Canary,
	// CanaryPaused, CanaryFailed, Frozen or Error.
	// +optional
	State ExtendedDaemonSetState `json:"state,omitempty"`

	// Reason explains State.
	// +optional
	Reason string `json:"reason,omitempty"`

	// LastHandledRetry is the last canary retry token handled, from
	// spec.strategy.canary.retry or the canary-retry annotation: acted upon,
	// or seen before the canary failed (a token can only retry a failure
	// it came after).
	// +optional
	LastHandledRetry string `json:"lastHandledRetry,omitempty"`

	// IgnoredUnresponsiveNodes is the number of nodes whose agent is not
	// counted against maxUnavailable because the node has not been Ready for
	// longer than the controller's grace period: nothing a rollout does can
	// bring their agent back, and a pod stuck terminating there would block
	// the rollout forever.
	// +optional
	IgnoredUnresponsiveNodes int32 `json:"ignoredUnresponsiveNodes,omitempty"`
	// NodesInMaintenance is the number of nodes left alone because they
	// are in maintenance: draining or drained, in maintenance, shutting
	// down, being disrupted or deleted, or cordoned. They take no canary,
	// are not judged, and their agent, left as it is, does not count
	// against maxUnavailable or a domain's budget.
	// +optional
	NodesInMaintenance int32 `json:"nodesInMaintenance,omitempty"`
}

// CanaryStatus is the state of the current canary.
type CanaryStatus struct {
	// ReplicaSet is the canary replica set.
	ReplicaSet string `json:"replicaSet"`
	// TemplateHash is the hash of the canary template.
	// +optional
	TemplateHash string `json:"templateHash,omitempty"`
	// Nodes are the canary nodes, kept stable for the canary's life.
	// +listType=set
	// +optional
	Nodes []string `json:"nodes,omitempty"`
	// StartedAt is when the canary started.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// Instance tells this run of the canary from any other run of the same
	// replica set: a retry, or the template applied again after a rollback,
	// is a new instance. A steering value written
	// "<replicaSet>@<instance>" (as kubectl eds writes them) acts on this
	// instance alone.
	// +kubebuilder:validation:MaxLength=20
	// +optional
	Instance string `json:"instance,omitempty"`
	// LeftoverSteering are the steering values (validate, fail, unpause,
	// skip-step) present when this instance started, by annotation name or
	// spec field path (spec.strategy.canary.validate, ...). They were given
	// to an earlier canary and do not act on this one; a value changed
	// since does.
	// +kubebuilder:validation:MaxProperties=8
	// +optional
	LeftoverSteering map[string]string `json:"leftoverSteering,omitempty"`
	// ReadyAt is when every canary pod first was available: the metric
	// analysis measures from then on (after its initialDelay), since before
	// it there is nothing to measure.
	// +optional
	ReadyAt *metav1.Time `json:"readyAt,omitempty"`
	// Paused is true while the canary waits for a person.
	// +optional
	Paused bool `json:"paused,omitempty"`
	// Failed is true once the canary failed.
	// +optional
	Failed bool `json:"failed,omitempty"`
	// Reason is why the canary paused or failed, for example CrashLoopBackOff.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message explains Reason.
	// +optional
	Message string `json:"message,omitempty"`
	// Analysis is the state of the metric analysis; with steps, of the
	// current step's.
	// +optional
	Analysis *AnalysisStatus `json:"analysis,omitempty"`
	// Step is the number (from 1) of the current step, with steps.
	// +optional
	Step int32 `json:"step,omitempty"`
	// StepStartedAt is when the current step started, with steps; without
	// steps, when the canary's duration last started over because its
	// nodes changed (a canary node replaced), unset before.
	// +optional
	StepStartedAt *metav1.Time `json:"stepStartedAt,omitempty"`
	// Steps are the steps reached so far, with steps.
	// +kubebuilder:validation:MaxItems=10
	// +listType=atomic
	// +optional
	Steps []CanaryStepStatus `json:"steps,omitempty"`
	// Gates are the confirm-* webhooks of the point the canary stands at
	// (its start, its next step or its promotion): the ones passed, which
	// are not asked again, and the ones it waits for, since when. A retried
	// canary asks them again.
	// +kubebuilder:validation:MaxItems=10
	// +listType=atomic
	// +optional
	Gates []CanaryGateStatus `json:"gates,omitempty"`
}

// ExtendedDaemonSet runs one pod per eligible node, rolling a new template
// out through a canary first.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=eds
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.status.desired`
// +kubebuilder:printcolumn:name="Current",type=integer,JSONPath=`.status.current`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.ready`
// +kubebuilder:printcolumn:name="Up-To-Date",type=integer,JSONPath=`.status.upToDate`
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.available`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Active RS",type=string,JSONPath=`.status.activeReplicaSet`
// +kubebuilder:printcolumn:name="Canary RS",type=string,JSONPath=`.status.canary.replicaSet`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ExtendedDaemonSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ExtendedDaemonSetSpec `json:"spec,omitempty"`
	// Status defaults to an observedGeneration of -1, so that an object the
	// controller has not looked at yet reads as in progress to kstatus
	// (Flux) rather than as current.
	// +kubebuilder:default={observedGeneration:-1}
	Status ExtendedDaemonSetStatus `json:"status,omitempty"`
}

// ExtendedDaemonSetList is a list of ExtendedDaemonSets.
//
// +kubebuilder:object:root=true
type ExtendedDaemonSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ExtendedDaemonSet `json:"items"`
}

// GetConditions returns the status conditions.
func (in *ExtendedDaemonSet) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions.
func (in *ExtendedDaemonSet) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

// DefaultProgressDeadline applies when progressDeadlineSeconds is absent,
// as in objects stored before its schema default existed.
const DefaultProgressDeadline = 600 * time.Second

// ProgressDeadline is progressDeadlineSeconds as a duration, its default
// when unset.
func (in *ExtendedDaemonSetSpec) ProgressDeadline() time.Duration {
	if s := in.ProgressDeadlineSeconds; s != nil && *s > 0 {
		return time.Duration(*s) * time.Second
	}
	return DefaultProgressDeadline
}
