package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ExtendedDaemonSetReplicaSetSpec is one pod-template version of an
// ExtendedDaemonSet. The controller writes it; users do not.
type ExtendedDaemonSetReplicaSetSpec struct {
	// Selector selects the pods of this replica set.
	// +required
	Selector *LabelSelector `json:"selector"`

	// Template is the pod this replica set runs.
	// +required
	Template corev1.PodTemplateSpec `json:"template"`

	// TemplateGeneration is the hash of Template, used to find the replica
	// set of a template again.
	// +optional
	TemplateGeneration string `json:"templateGeneration,omitempty"`
}

// ReplicaSetRole is the part a replica set plays in its ExtendedDaemonSet.
type ReplicaSetRole string

const (
	ReplicaSetActive  ReplicaSetRole = "Active"
	ReplicaSetCanary  ReplicaSetRole = "Canary"
	ReplicaSetUnknown ReplicaSetRole = "Unknown"
)

// ExtendedDaemonSetReplicaSetStatus is the observed state of a replica set.
type ExtendedDaemonSetReplicaSetStatus struct {
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, Reconciling and Stalled.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Status is the role of this replica set: Active, Canary or Unknown.
	// +optional
	Status ReplicaSetRole `json:"status,omitempty"`

	// Desired is the number of nodes this replica set should run a pod on.
	// +optional
	Desired int32 `json:"desired"`
	// Current is the number of desired nodes that run a pod, of this
	// replica set or of one it replaces, as a DaemonSet counts: counting
	// nodes, no counter exceeds Desired (a replica set without a role has
	// no desired node, and counts none).
	// +optional
	Current int32 `json:"current"`
	// Ready is the number of desired nodes that run a ready pod.
	// +optional
	Ready int32 `json:"ready"`
	// Available is the number of desired nodes that run a pod ready for at
	// least minReadySeconds.
	// +optional
	Available int32 `json:"available"`
	// UpToDate is the number of desired nodes whose only pod is an available
	// pod of this replica set.
	// +optional
	UpToDate int32 `json:"upToDate"`
	// Unschedulable is the number of pods of this replica set the scheduler
	// could not place.
	// +optional
	Unschedulable int32 `json:"unschedulable,omitempty"`
	// ActiveSince is when this replica set last became the active one; slow
	// start counts its intervals from there.
	// +optional
	ActiveSince *metav1.Time `json:"activeSince,omitempty"`
	// IgnoredUnresponsiveNodes is the number of nodes not counted as
	// unavailable because they have not been Ready for longer than the
	// controller's grace period.
	// +optional
	IgnoredUnresponsiveNodes int32 `json:"ignoredUnresponsiveNodes,omitempty"`
	// NodesInMaintenance is the number of nodes left alone because they
	// are in maintenance: draining or drained, in maintenance, shutting
	// down, being disrupted or deleted, or cordoned. They take no canary,
	// are not judged, and their agent, left as it is, does not count
	// against maxUnavailable or a domain's budget.
	// +optional
	NodesInMaintenance int32 `json:"nodesInMaintenance,omitempty"`
	// LastProgressTime is when the replica set last made progress (a node
	// gaining an available pod of this replica set, or an old pod gone), or
	// started waiting for its pods, moved on by the time its rollout was
	// held since (a pause, a freeze, a bake). spec.progressDeadlineSeconds
	// of the ExtendedDaemonSet is counted from it.
	// +optional
	LastProgressTime *metav1.Time `json:"lastProgressTime,omitempty"`
	// ProgressMark is how far the rollout had come at LastProgressTime;
	// progress is going past it. Set only while the replica set waits for
	// its pods or its rollout is held.
	// +optional
	ProgressMark *ProgressMark `json:"progressMark,omitempty"`
	// Domains are the domains of spec.strategy.rollingUpdate.topology of
	// the ExtendedDaemonSet, in the order a Sequential rollout takes them,
	// for the active replica set; at most 32, from the first unfinished one
	// when there are more.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	Domains []DomainStatus `json:"domains,omitempty"`
}

// ProgressMark is how far a rollout has come, for its progress deadline.
// A pod that becomes available and fails again, or is evicted and
// recreated, takes neither figure past the mark: only a node newly up to
// date or an old pod gone does.
type ProgressMark struct {
	// UpToDate is the most nodes seen up to date (see
	// ExtendedDaemonSetReplicaSetStatus.UpToDate); it drops only when nodes
	// leave the replica set.
	UpToDate int32 `json:"upToDate"`
	// Old is the fewest pods of other replica sets seen on the nodes; it
	// grows only when more come (a failed canary's returning).
	Old int32 `json:"old"`
	// HeldSince is when the rollout was last held by something other than
	// its pods (a pause, a freeze, a domain's bake, the DaemonSet it
	// replaces), unset while it waits for its pods. The deadline's clock
	// stops meanwhile and goes on from where it stood, so a pod that flips
	// a rollout between a hold and a wait does not start it over.
	// +optional
	HeldSince *metav1.Time `json:"heldSince,omitempty"`
}

// ExtendedDaemonSetReplicaSet runs one template of an ExtendedDaemonSet on
// its share of the nodes.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ers
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.status`
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.status.desired`
// +kubebuilder:printcolumn:name="Current",type=integer,JSONPath=`.status.current`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.ready`
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.available`
// +kubebuilder:printcolumn:name="Node Selector",type=string,JSONPath=`.spec.template.spec.nodeSelector`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ExtendedDaemonSetReplicaSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ExtendedDaemonSetReplicaSetSpec `json:"spec,omitempty"`
	// Status defaults to an observedGeneration of -1: not yet observed.
	// +kubebuilder:default={observedGeneration:-1}
	Status ExtendedDaemonSetReplicaSetStatus `json:"status,omitempty"`
}

// ExtendedDaemonSetReplicaSetList is a list of ExtendedDaemonSetReplicaSets.
//
// +kubebuilder:object:root=true
type ExtendedDaemonSetReplicaSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ExtendedDaemonSetReplicaSet `json:"items"`
}

// GetConditions returns the status conditions.
func (in *ExtendedDaemonSetReplicaSet) GetConditions() []metav1.Condition {
	return in.Status.Conditions
}

// SetConditions sets the status conditions.
func (in *ExtendedDaemonSetReplicaSet) SetConditions(c []metav1.Condition) {
	in.Status.Conditions = c
}
