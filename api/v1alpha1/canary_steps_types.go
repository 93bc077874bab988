package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// MaxCanarySteps bounds spec.strategy.canary.steps and the step results
// kept in the status.
const MaxCanarySteps = 10

// CanaryStep is one stage of a canary that grows: the canary runs on
// Replicas nodes until Duration has passed and its checks passed, or, with
// Pause, until a person moves it on. The nodes of earlier steps stay canary
// nodes.
// +kubebuilder:validation:XValidation:rule="has(self.duration) != (has(self.pause) && self.pause)",message="a canary step needs either a duration or pause: true, not both"
type CanaryStep struct {
	// Replicas is the number of canary nodes during this step, or a
	// percentage of the desired nodes rounded up. It includes the nodes of
	// the steps before.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 1 : self.matches('^(100|[1-9][0-9]?)%$')",message="step replicas must be an integer >= 1 or a percentage between 1% and 100%"
	Replicas intstr.IntOrString `json:"replicas"`

	// Duration is how long the step runs before the canary can go on to the
	// next step (or be promoted after the last one), provided its analysis
	// succeeded on measurements taken during the step.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="step duration must be a positive duration"
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`

	// Pause holds the step until a person skips it (`kubectl eds canary
	// skip-step`); its pods and analysis can still fail the canary.
	// +optional
	Pause bool `json:"pause,omitempty"`
}

// CanaryStepResult is how a step of a canary ended.
// +kubebuilder:validation:Enum=Running;Successful;Skipped;Failed
type CanaryStepResult string

const (
	// CanaryStepRunning: the step is the current one.
	CanaryStepRunning CanaryStepResult = "Running"
	// CanaryStepSuccessful: the step's duration passed and its checks passed.
	CanaryStepSuccessful CanaryStepResult = "Successful"
	// CanaryStepSkipped: a person moved the canary past the step.
	CanaryStepSkipped CanaryStepResult = "Skipped"
	// CanaryStepFailed: the canary failed during the step.
	CanaryStepFailed CanaryStepResult = "Failed"
)

// CanaryStepStatus is what happened during one step of a canary.
type CanaryStepStatus struct {
	// Step is the step's number, from 1.
	Step int32 `json:"step"`
	// Replicas is the step's replicas, as the spec says them.
	Replicas string `json:"replicas"`
	// Nodes is the number of canary nodes during the step.
	Nodes int32 `json:"nodes"`
	// StartedAt is when the step started.
	StartedAt metav1.Time `json:"startedAt"`
	// FinishedAt is when the step ended, unset while it runs.
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// Result is Running while the step runs, then how it ended.
	Result CanaryStepResult `json:"result"`
	// Analysis is the phase of the step's metric analysis when it ended.
	// +optional
	Analysis AnalysisPhase `json:"analysis,omitempty"`
}
