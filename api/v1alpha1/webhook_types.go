package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CanaryWebhookType is when a webhook is called, and whether the canary
// waits for its answer.
// +kubebuilder:validation:Enum=confirm-start;confirm-step;confirm-promotion;event;rollback
type CanaryWebhookType string

// Webhook types. The confirm-* types are gates: the canary waits at them
// until the receiver answers 2xx. event and rollback are notifications:
// sent once, never waited for.
const (
	// WebhookConfirmStart is asked before the canary's pods are created.
	WebhookConfirmStart CanaryWebhookType = "confirm-start"
	// WebhookConfirmStep is asked before each step after the first and,
	// once promoted, before each domain after the first of a Sequential
	// topology.
	WebhookConfirmStep CanaryWebhookType = "confirm-step"
	// WebhookConfirmPromotion is asked once the canary's duration and
	// analysis passed, before it is promoted.
	WebhookConfirmPromotion CanaryWebhookType = "confirm-promotion"
	// WebhookEvent is told every transition of the canary and the rollout.
	WebhookEvent CanaryWebhookType = "event"
	// WebhookRollback is told when a canary failed and its nodes go back.
	WebhookRollback CanaryWebhookType = "rollback"
)

// IsGate says whether the canary waits for webhooks of type t.
func (t CanaryWebhookType) IsGate() bool {
	return t == WebhookConfirmStart || t == WebhookConfirmStep || t == WebhookConfirmPromotion
}

// GateTimeoutAction is what a gate that waited its timeout does.
// +kubebuilder:validation:Enum=Fail;Pause
type GateTimeoutAction string

const (
	// GateTimeoutFail fails the canary (reason GateTimedOut).
	GateTimeoutFail GateTimeoutAction = "Fail"
	// GateTimeoutPause pauses the canary (reason GateTimedOut) until a
	// person unpauses it, which passes the gate, validates or fails it.
	GateTimeoutPause GateTimeoutAction = "Pause"
)

// Gate defaults, applied by the controller: the schema cannot default
// fields that only gates may set.
const (
	DefaultGateInterval = "30s"
	DefaultGateTimeout  = "1h"
)

// CanaryWebhook is a request the controller sends to a system of the
// user's. A gate (confirm-start, confirm-step, confirm-promotion) is POSTed
// the rollout's state and holds the canary until it answers 2xx, asking
// again every interval, for at most timeout; meanwhile the canary is still
// judged (autoFail, its analysis and canaryTimeout still fail it). A
// notification (event, rollback) is POSTed once per transition and never
// waited for. Only the leader sends; answer bodies are never copied into
// status or events.
// +kubebuilder:validation:XValidation:rule="self.type in ['confirm-start', 'confirm-step', 'confirm-promotion'] || (!has(self.interval) && !has(self.timeout) && !has(self.onTimeout))",message="interval, timeout and onTimeout are only allowed on confirm-start, confirm-step and confirm-promotion webhooks"
type CanaryWebhook struct {
	// Name tells this webhook from the others, in status and metrics.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Name string `json:"name"`

	// Type is when the webhook is called: confirm-start (before the
	// canary's pods are created), confirm-step (before each step after the
	// first and, once promoted, before each domain after the first of a
	// Sequential topology), confirm-promotion (before promotion, once the duration and
	// the analysis passed), event (every transition: canary started, step
	// started, paused, promoted, failed, rolled out) or rollback (the canary
	// failed and its nodes go back).
	// +required
	Type CanaryWebhookType `json:"type"`

	WebRequest `json:",inline"`

	// Interval is how often a gate asks again while its answer is not 2xx
	// (30s when unset, at least 5s). Gates only.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('5s')",message="interval must be at least 5s"
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`

	// Timeout is how long a gate waits at most (1h when unset); then
	// onTimeout applies. The wait's start is recorded in status, so a
	// restart of the controller does not extend it. Gates only.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="timeout must be a positive duration"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// OnTimeout is what a gate that waited its timeout does: Fail (the
	// default) fails the canary, Pause pauses it until a person unpauses
	// (which passes the gate), validates or fails it. Both with reason
	// GateTimedOut. Gates only.
	// +optional
	OnTimeout GateTimeoutAction `json:"onTimeout,omitempty"`
}

// CanaryGateStatus is a gate of the canary at the point it stands: waiting
// for its answer, or passed.
type CanaryGateStatus struct {
	// Name is the webhook's name.
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Type is the webhook's type.
	Type CanaryWebhookType `json:"type"`
	// Step is the step the gate stands before (confirm-step), 0 otherwise.
	// +optional
	Step int32 `json:"step,omitempty"`
	// Since is when the canary started waiting at this gate: its timeout
	// counts from then.
	Since metav1.Time `json:"since"`
	// PassedAt is when the gate answered 2xx, unset while it waits.
	// +optional
	PassedAt *metav1.Time `json:"passedAt,omitempty"`
	// LastAnswer is the status code and a short reason of the last answer
	// that did not pass, for example "answered 503" or
	// "host not allowed"; never the answer's body.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	LastAnswer string `json:"lastAnswer,omitempty"`
}
