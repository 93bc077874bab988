package v1alpha1

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ExtendedDaemonsetSettingSpec overrides container resources of an
// ExtendedDaemonSet's pods on the nodes it selects.
type ExtendedDaemonsetSettingSpec struct {
	// Reference names the ExtendedDaemonSet these settings apply to.
	// +kubebuilder:validation:XValidation:rule="size(self.name) > 0",message="reference.name must name an ExtendedDaemonSet"
	// +required
	Reference *autoscalingv1.CrossVersionObjectReference `json:"reference"`

	// NodeSelector selects the nodes these settings apply to.
	// +required
	NodeSelector metav1.LabelSelector `json:"nodeSelector"`

	// Containers are the resource overrides, one per container name.
	// +listType=map
	// +listMapKey=name
	// +optional
	Containers []ExtendedDaemonsetSettingContainerSpec `json:"containers,omitempty"`
}

// ExtendedDaemonsetSettingContainerSpec overrides one container's resources.
type ExtendedDaemonsetSettingContainerSpec struct {
	// Name of the container in the pod template.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`
	// Resources replace the container's resources on the selected nodes.
	// +required
	Resources corev1.ResourceRequirements `json:"resources"`
}

// SettingState says whether a Setting is in force.
type SettingState string

const (
	SettingValid SettingState = "Valid"
	SettingError SettingState = "Error"
)

// ExtendedDaemonsetSettingStatus is the observed state of a Setting.
type ExtendedDaemonsetSettingStatus struct {
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready and Stalled.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Status is Valid or Error.
	// +optional
	Status SettingState `json:"status,omitempty"`
	// Error explains an Error status, for example two settings claiming the
	// same nodes.
	// +optional
	Error string `json:"error,omitempty"`
}

// ExtendedDaemonsetSetting overrides the resources of an ExtendedDaemonSet's
// containers on a group of nodes.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=edss
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.status`
// +kubebuilder:printcolumn:name="Node Selector",type=string,JSONPath=`.spec.nodeSelector`
// +kubebuilder:printcolumn:name="Error",type=string,JSONPath=`.status.error`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ExtendedDaemonsetSetting struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ExtendedDaemonsetSettingSpec   `json:"spec,omitempty"`
	Status ExtendedDaemonsetSettingStatus `json:"status,omitempty"`
}

// ExtendedDaemonsetSettingList is a list of ExtendedDaemonsetSettings.
//
// +kubebuilder:object:root=true
type ExtendedDaemonsetSettingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ExtendedDaemonsetSetting `json:"items"`
}

// GetConditions returns the status conditions.
func (in *ExtendedDaemonsetSetting) GetConditions() []metav1.Condition {
	return in.Status.Conditions
}

// SetConditions sets the status conditions.
func (in *ExtendedDaemonsetSetting) SetConditions(c []metav1.Condition) {
	in.Status.Conditions = c
}
