package v1alpha1

// NodeHealthMetric judges the blast radius of a new version on its nodes:
// a node agent whose own pods are Ready can still break its node (a CNI
// that cuts every other pod off the network, a CSI driver that wedges
// mounts). Each judged node (a canary node, or a node of the domain being
// baked) is compared with itself before the change, through the times its
// conditions and its other pods last changed, and with same-zone nodes that
// did not change over the same time. Nodes in maintenance (draining,
// cordoned, shutting down, being disrupted) are neither judged nor part of
// the baseline.
type NodeHealthMetric struct {
	// Conditions are node condition types that are bad when True, judged
	// beside the built-in ones (Ready not True; NetworkUnavailable,
	// MemoryPressure, DiskPressure, PIDPressure True): for example Node
	// Problem Detector's KernelDeadlock.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=316
	// +kubebuilder:validation:items:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	// +listType=set
	// +optional
	Conditions []string `json:"conditions,omitempty"`

	// MaxUnhealthyNodes is how many judged nodes may have turned unhealthy
	// (a condition gone bad) since the change, beyond what the baseline
	// nodes show over the same time.
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxUnhealthyNodes *int32 `json:"maxUnhealthyNodes,omitempty"`

	// MaxPodReadinessDrop is how many percentage points the readiness of
	// the other workloads' pods on the judged nodes may fall below the
	// baseline's. A pod that restarted or failed since the change counts
	// as not ready; a pod already not ready before it is not counted.
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	MaxPodReadinessDrop *int32 `json:"maxPodReadinessDrop,omitempty"`

	// OnRegression is what a regression beyond failureLimit does: Fail the
	// canary (its nodes go back to the stable version), or Pause it for a
	// person to fail or validate.
	// +kubebuilder:default=Fail
	// +optional
	OnRegression NodeHealthAction `json:"onRegression,omitempty"`
}

// NodeHealthAction is what a node-health regression does to the canary.
// +kubebuilder:validation:Enum=Fail;Pause
type NodeHealthAction string

const (
	// NodeHealthFail fails the canary.
	NodeHealthFail NodeHealthAction = "Fail"
	// NodeHealthPause pauses the canary for a person.
	NodeHealthPause NodeHealthAction = "Pause"
)

// NodeEvidence is what a nodeHealth measurement found on one node.
type NodeEvidence struct {
	// Node is the node's name.
	Node string `json:"node"`
	// Message says what went wrong there since the change: the conditions
	// gone bad, the other pods not ready, restarted or failed (a few
	// named).
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message"`
}
