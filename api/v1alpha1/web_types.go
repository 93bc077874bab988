package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WebRequest is an HTTP request to an endpoint of the user's: a webhook or a web metric.
// The controller only reaches the hosts its --allowed-webhook-hosts flag
// allows: every host but loopback, link-local (cloud metadata included) and
// the API server's addresses unless listed there. Answers are never copied
// into status or events: only the status code and a short reason are.
// +kubebuilder:validation:XValidation:rule="has(self.url) != has(self.urlFrom)",message="exactly one of url or urlFrom must be set"
type WebRequest struct {
	// URL is the endpoint, an http or https URL with a host, sent as
	// written (no templating). A URL that holds a token belongs in a
	// Secret: use urlFrom instead.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHostname() != ''",message="url must be an http or https URL with a host"
	// +optional
	URL string `json:"url,omitempty"`

	// URLFrom reads the URL from a key of a Secret in the
	// ExtendedDaemonSet's namespace, so that tokens in URLs stay out of the
	// spec. The value must be an http or https URL with a host. It is read
	// for each request, so a rotated URL is used at once; optional has no
	// effect, since a request needs its URL.
	// +kubebuilder:validation:XValidation:rule="self.name != ''",message="urlFrom.name must name a Secret"
	// +optional
	URLFrom *corev1.SecretKeySelector `json:"urlFrom,omitempty"`

	// HeadersFrom names a Secret in the ExtendedDaemonSet's namespace whose
	// keys are header names and whose values are their values, for
	// example Authorization: Bearer <token>.
	// +kubebuilder:validation:XValidation:rule="self.name != ''",message="headersFrom.name must name a Secret"
	// +optional
	HeadersFrom *corev1.LocalObjectReference `json:"headersFrom,omitempty"`

	// SigningKeyFrom is a key of a Secret in the ExtendedDaemonSet's
	// namespace. When set, each request carries the HMAC-SHA256 of its body
	// with that key, hex-encoded, in the header
	// X-Extendeddaemonset-Signature: sha256=<hex>, so that the receiver can
	// tell the request comes from this controller. With optional, a missing
	// Secret or key sends the request unsigned.
	// +kubebuilder:validation:XValidation:rule="self.name != ''",message="signingKeyFrom.name must name a Secret"
	// +optional
	SigningKeyFrom *corev1.SecretKeySelector `json:"signingKeyFrom,omitempty"`

	// RequestTimeout bounds one attempt, answer included; at most 30s.
	// +kubebuilder:default="10s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="requestTimeout must be a positive duration"
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('30s')",message="requestTimeout must be at most 30s"
	// +optional
	RequestTimeout *metav1.Duration `json:"requestTimeout,omitempty"`

	// Retries is how many times a request is sent again, with exponential
	// backoff, after a connection error or an answer 429 or 5xx; from 0 to
	// 5.
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5
	// +optional
	Retries *int32 `json:"retries,omitempty"`
}

// WebMetric measures a metric with an HTTP request whose JSON answer holds
// the value.
// +kubebuilder:validation:XValidation:rule="!has(self.body) || (has(self.method) && self.method == 'POST')",message="body is only sent with method POST"
type WebMetric struct {
	WebRequest `json:",inline"`

	// Method is GET or POST.
	// +kubebuilder:default=GET
	// +kubebuilder:validation:Enum=GET;POST
	// +optional
	Method string `json:"method,omitempty"`

	// Body is the JSON document a POST sends, as written (no templating),
	// with Content-Type application/json.
	// +kubebuilder:validation:MaxLength=16384
	// +optional
	Body string `json:"body,omitempty"`

	// JSONPath is where the number is in the JSON answer, in the syntax of
	// kubectl's -o jsonpath, for example {.data.errorRate}. It must select
	// one number, or a string that parses as one; an answer that is not
	// 2xx, not JSON, or has no number there is a measurement error.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +required
	JSONPath string `json:"jsonPath"`
}
