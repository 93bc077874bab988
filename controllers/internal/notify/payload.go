package notify

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// Payload is the JSON document every webhook is POSTed: enough for a
// receiver to act without reading the cluster, and the same for gates and
// notifications. It is built from the status just written, so it never
// tells a state older than the one that decided the call.
type Payload struct {
	// DeliveryID is the same for every send of one transition of one
	// canary instance (a gate asked again, a retry), so a receiver can
	// drop repeats; it is also in the X-Extendeddaemonset-Delivery header.
	DeliveryID         string          `json:"deliveryId"`
	Object             ObjectReference `json:"object"`
	Generation         int64           `json:"generation"`
	ObservedGeneration int64           `json:"observedGeneration"`
	// Phase is the ExtendedDaemonSet's state column: Canary,
	// CanaryPaused, CanaryFailed, RollingUpdate, Running, ...
	Phase      string     `json:"phase"`
	Transition Transition `json:"transition"`
	// Step is the canary's step (from 1), 0 without steps.
	Step int32 `json:"step,omitempty"`
	// Domain is the domain of a zone-by-zone rollout being rolled out or
	// baked, empty otherwise.
	Domain string `json:"domain,omitempty"`
	// ReplicaSet is the canary's (or, once promoted, the rolled out)
	// replica set; TemplateRevision the hash of its template.
	ReplicaSet       string   `json:"replicaSet,omitempty"`
	TemplateRevision string   `json:"templateRevision,omitempty"`
	OldImages        []Image  `json:"oldImages,omitempty"`
	NewImages        []Image  `json:"newImages,omitempty"`
	CanaryNodes      []string `json:"canaryNodes,omitempty"`
	Analysis         *Verdict `json:"analysis,omitempty"`
}

// ObjectReference names the ExtendedDaemonSet.
type ObjectReference struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	UID        string `json:"uid"`
}

// Transition is why the webhook is called: its type, and what happened
// (an event reason such as CanaryStarted, CanaryFailed or RolledOut; for a
// gate, the gate asked).
type Transition struct {
	Webhook v1alpha1.CanaryWebhookType `json:"webhook"`
	// Name is the webhook's name.
	Name    string `json:"name"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
	// Gate is the gate asked, for confirm-* webhooks.
	Gate *GateKey `json:"gate,omitempty"`
}

// Image is a container's image.
type Image struct {
	Container string `json:"container"`
	Image     string `json:"image"`
}

// Verdict is the canary's analysis: its phase and each metric's last value
// against its threshold.
type Verdict struct {
	Phase   v1alpha1.AnalysisPhase `json:"phase"`
	Message string                 `json:"message,omitempty"`
	Metrics []MetricVerdict        `json:"metrics,omitempty"`
}

// MetricVerdict is one metric's last measurement.
type MetricVerdict struct {
	Name      string                   `json:"name"`
	Phase     v1alpha1.AnalysisPhase   `json:"phase,omitempty"`
	LastValue string                   `json:"lastValue,omitempty"`
	Threshold *v1alpha1.ThresholdRange `json:"threshold,omitempty"`
}

// Facts are what a payload is built from: the ExtendedDaemonSet as its
// status was just written, the canary decided (kept when promoted, which
// drops it from the status), and the templates before and after.
type Facts struct {
	EDS *v1alpha1.ExtendedDaemonSet
	// Canary is the canary instance the transition is about, nil for a
	// rollout without one.
	Canary *v1alpha1.CanaryStatus
	// Old and New are the active template's pod spec and the new one's,
	// nil when unknown.
	Old, New         *corev1.PodSpec
	ReplicaSet       string
	TemplateRevision string
	// Domain is the domain a gate stands before, empty for the domain
	// that bakes, if any.
	Domain string
}

// NewPayload is the payload of transition t, told to webhook w.
func NewPayload(f Facts, w *v1alpha1.CanaryWebhook, t Transition) Payload {
	eds := f.EDS
	t.Webhook, t.Name = w.Type, w.Name
	p := Payload{
		Object: ObjectReference{
			APIVersion: v1alpha1.GroupVersion.String(), Kind: "ExtendedDaemonSet",
			Namespace: eds.Namespace, Name: eds.Name, UID: string(eds.UID),
		},
		Generation: eds.Generation, ObservedGeneration: eds.Status.ObservedGeneration,
		Phase: string(eds.Status.State), Transition: t,
		ReplicaSet: f.ReplicaSet, TemplateRevision: f.TemplateRevision,
		OldImages: images(f.Old), NewImages: images(f.New),
	}
	if b := eds.Status.Bake; b != nil && b.ReplicaSet == eds.Status.ActiveReplicaSet {
		p.Domain = b.Domain
	}
	if f.Domain != "" {
		p.Domain = f.Domain
	}
	instance := ""
	if c := f.Canary; c != nil {
		p.Step, p.CanaryNodes, instance = c.Step, c.Nodes, c.Instance
		p.Analysis = verdictOf(c.Analysis, eds.Spec.Strategy.Canary)
	}
	gate := ""
	if t.Gate != nil {
		gate = t.Gate.String()
	}
	// A gate asked again is one delivery; a notification is one per
	// transition, step and domain of the instance.
	p.DeliveryID = DeliveryID(string(eds.UID), f.ReplicaSet, instance, w.Name, t.Reason, gate,
		strconv.Itoa(int(p.Step)), p.Domain)
	return p
}

// DeliveryID is a stable id of the given parts.
func DeliveryID(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:16])
}

func images(spec *corev1.PodSpec) []Image {
	if spec == nil {
		return nil
	}
	out := make([]Image, 0, len(spec.InitContainers)+len(spec.Containers))
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		out = append(out, Image{Container: c.Name, Image: c.Image})
	}
	return out
}

// verdictOf is the analysis a of a canary with strategy, each metric with
// its last value and its threshold; nil without an analysis.
func verdictOf(a *v1alpha1.AnalysisStatus, strategy *v1alpha1.CanaryStrategy) *Verdict {
	if a == nil {
		return nil
	}
	thresholds := map[string]*v1alpha1.ThresholdRange{}
	if strategy != nil && strategy.Analysis != nil {
		for _, m := range strategy.Analysis.Metrics {
			thresholds[m.Name] = m.ThresholdRange
		}
	}
	v := &Verdict{Phase: a.Phase, Message: a.Message}
	for _, m := range a.Metrics {
		mv := MetricVerdict{Name: m.Name, Phase: m.Phase, Threshold: thresholds[m.Name]}
		if n := len(m.Measurements); n > 0 {
			mv.LastValue = m.Measurements[n-1].Value
		}
		v.Metrics = append(v.Metrics, mv)
	}
	return v
}
