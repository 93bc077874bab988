package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TopologyOrder says how the domains of a topology rollout take turns.
// +kubebuilder:validation:Enum=Sequential;Parallel
type TopologyOrder string

const (
	// TopologySequential updates one domain at a time, in the order of
	// status.domains: a domain starts once every earlier one is done and
	// has baked.
	TopologySequential TopologyOrder = "Sequential"
	// TopologyParallel updates every domain at once, each within its own
	// budget.
	TopologyParallel TopologyOrder = "Parallel"
)

// RollingUpdateTopology rolls an update out domain by domain (zone by zone,
// for example), with a budget of unavailable pods per domain beside the
// global maxUnavailable.
// +kubebuilder:validation:XValidation:rule="!has(self.domainBakeTime) || !has(self.order) || self.order == 'Sequential'",message="domainBakeTime is only allowed with order Sequential: parallel domains have no next domain to hold back",fieldPath=".domainBakeTime"
type RollingUpdateTopology struct {
	// Key is the node label whose values are the domains, for example
	// topology.kubernetes.io/zone. Nodes without it form one domain of
	// their own, updated last.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	Key string `json:"key"`

	// MaxUnavailablePerDomain is the largest number (or percentage of the
	// domain's desired pods, rounded up) of pods of one domain that may be
	// unavailable at once. The global maxUnavailable still bounds the total.
	// +kubebuilder:default=1
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 1 : self.matches('^(100|[1-9][0-9]?)%$')",message="maxUnavailablePerDomain must be an integer >= 1 or a percentage between 1% and 100%"
	// +optional
	MaxUnavailablePerDomain *intstr.IntOrString `json:"maxUnavailablePerDomain,omitempty"`

	// Order is Sequential (one domain at a time, in the order of
	// status.domains) or Parallel (every domain at once).
	// +kubebuilder:default=Sequential
	// +optional
	Order TopologyOrder `json:"order,omitempty"`

	// DomainBakeTime, with order Sequential, holds the next domain back
	// until every pod of the finished domain has stayed available this
	// long: a pod of it that turns unavailable (a crash, a restart) makes
	// the domain unfinished again, and its bake starts over once the pod
	// is back.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="domainBakeTime must be a positive duration"
	// +optional
	DomainBakeTime *metav1.Duration `json:"domainBakeTime,omitempty"`
}

// DomainState is where one domain of a topology rollout stands.
// +kubebuilder:validation:Enum=Pending;Updating;Baking;Done
type DomainState string

const (
	// DomainPending: the domain still runs old pods and waits for its turn.
	DomainPending DomainState = "Pending"
	// DomainUpdating: the domain's pods are being replaced, or it waits
	// for them to be available.
	DomainUpdating DomainState = "Updating"
	// DomainBaking: every pod of the domain is up to date and available;
	// the next domain waits for domainBakeTime.
	DomainBaking DomainState = "Baking"
	// DomainDone: every pod of the domain is up to date and available.
	DomainDone DomainState = "Done"
)

// MaxStatusDomains bounds status.domains: with more domains, the list
// starts at the first unfinished one.
const MaxStatusDomains = 32

// DomainStatus is one domain of a topology rollout.
type DomainStatus struct {
	// Name is the value of the topology key, or (none) for the nodes
	// without it.
	Name string `json:"name"`
	// State is Pending, Updating, Baking or Done.
	State DomainState `json:"state"`
	// Desired is the number of the domain's nodes that should run a pod.
	Desired int32 `json:"desired"`
	// UpToDate is the number of them whose only pod is an available pod
	// of this replica set.
	UpToDate int32 `json:"upToDate"`
	// Unavailable is the number of them without an available pod.
	// +optional
	Unavailable int32 `json:"unavailable,omitempty"`
	// BakingSince, for a Baking domain, is when its bake began: every pod
	// of the domain has been up to date and available since then.
	// +optional
	BakingSince *metav1.Time `json:"bakingSince,omitempty"`
	// Analysis, in the ExtendedDaemonSet's status, is the verdict of the
	// domain's bake analysis: Successful once its bake passed, the current
	// phase while it bakes, empty before its bake or without one.
	// +optional
	Analysis AnalysisPhase `json:"analysis,omitempty"`
}

// DomainBakeStatus is the analysis that judges a domain's bake: with a
// canary analysis and a Sequential topology with domainBakeTime, the
// canary's metrics keep judging the updated pods while a domain bakes, and
// the next domain starts only once the bake time has passed and this
// analysis is Successful.
type DomainBakeStatus struct {
	// ReplicaSet is the replica set rolling out, whose pods are judged.
	ReplicaSet string `json:"replicaSet"`
	// Domain is the domain baking, or the last one that baked.
	Domain string `json:"domain"`
	// StartedAt is when the bake being judged began, or when a retry
	// asked for a new judgement: measurements start from then, after the
	// analysis's initialDelay.
	StartedAt metav1.Time `json:"startedAt"`
	// Analysis is the state of the bake's analysis. A Failed, Error or
	// Inconclusive phase halts the rollout: no further domain starts, and
	// nothing is rolled back, until the template changes or a retry is
	// asked for.
	// +optional
	Analysis *AnalysisStatus `json:"analysis,omitempty"`
	// PassedThrough is the last domain, in the order of the rollout, whose
	// bake passed (its time and its analysis): every domain up to it may
	// be followed by the next one.
	// +optional
	PassedThrough string `json:"passedThrough,omitempty"`
}

// DomainGateStatus is where the confirm-step webhooks of the canary stand
// in a Sequential topology rollout, after promotion: before each domain
// after the first, the domain starts only once every one of them answered
// 2xx. The record belongs to one replica set: a new rollout asks again.
type DomainGateStatus struct {
	// ReplicaSet is the replica set rolling out.
	ReplicaSet string `json:"replicaSet"`
	// Domain is the domain the gates stand before: the one waiting, or the
	// last one they let start.
	Domain string `json:"domain"`
	// Gates are the confirm-step gates before Domain, waiting or passed.
	// +kubebuilder:validation:MaxItems=10
	// +listType=atomic
	// +optional
	Gates []CanaryGateStatus `json:"gates,omitempty"`
	// PassedThrough is the last domain, in the order of the rollout, whose
	// gates all passed: every domain up to it may start.
	// +optional
	PassedThrough string `json:"passedThrough,omitempty"`
}
