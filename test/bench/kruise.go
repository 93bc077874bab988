package bench

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// kruiseDaemonSetKind is OpenKruise's Advanced DaemonSet. The benchmark
// writes and reads it as unstructured objects through the local types
// below, which name only the fields it sets or reads: Kruise's Go API
// stays out of our module.
var kruiseDaemonSetKind = schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1alpha1", Kind: "DaemonSet"}

// kruiseDaemonSetSpec is the spec of an Advanced DaemonSet. Kruise's
// mutating webhook is left out of the benchmark (kruiseproc.go), so every
// field it would default is set here, to its default unless the scenario
// says otherwise: burstReplicas 250, revisionHistoryLimit 10,
// updateStrategy.type RollingUpdate, and rollingUpdate's
// rollingUpdateType, maxUnavailable and maxSurge.
type kruiseDaemonSetSpec struct {
	Selector             *metav1.LabelSelector  `json:"selector"`
	Template             corev1.PodTemplateSpec `json:"template"`
	UpdateStrategy       kruiseUpdateStrategy   `json:"updateStrategy"`
	BurstReplicas        *intstr.IntOrString    `json:"burstReplicas"`
	RevisionHistoryLimit *int32                 `json:"revisionHistoryLimit"`
}

type kruiseUpdateStrategy struct {
	Type          string              `json:"type"`
	RollingUpdate kruiseRollingUpdate `json:"rollingUpdate"`
}

type kruiseRollingUpdate struct {
	// Type is Standard or InPlaceIfPossible.
	Type           string              `json:"rollingUpdateType"`
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable"`
	MaxSurge       *intstr.IntOrString `json:"maxSurge"`
}

// kruiseDaemonSetStatus is the part of an Advanced DaemonSet's status that
// says where its rollout stands; the same fields as a DaemonSet's.
type kruiseDaemonSetStatus struct {
	ObservedGeneration     int64 `json:"observedGeneration"`
	DesiredNumberScheduled int32 `json:"desiredNumberScheduled"`
	CurrentNumberScheduled int32 `json:"currentNumberScheduled"`
	UpdatedNumberScheduled int32 `json:"updatedNumberScheduled"`
	NumberAvailable        int32 `json:"numberAvailable"`
	NumberUnavailable      int32 `json:"numberUnavailable"`
}

// The values of Kruise's defaults the benchmark sets itself.
const (
	kruiseBurstReplicas        = 250
	kruiseRevisionHistoryLimit = 10
)

// kruiseSpec is the Advanced DaemonSet that rolls out as sc's strategy
// says, running image version.
func kruiseSpec(sc scenario, version string) kruiseDaemonSetSpec {
	rolling := sc.strategy().RollingUpdate
	zero := intstr.FromInt32(0)
	// Kruise names its rolling update types as we do: Standard and
	// InPlaceIfPossible.
	update := kruiseRollingUpdate{Type: string(rolling.Type), MaxUnavailable: rolling.MaxUnavailable, MaxSurge: rolling.MaxSurge}
	if update.Type == "" {
		update.Type = string(v1alpha1.RollingUpdateStandard)
	}
	if update.MaxUnavailable == nil {
		update.MaxUnavailable = &zero
	}
	if update.MaxSurge == nil {
		update.MaxSurge = &zero
	}
	burst := intstr.FromInt32(kruiseBurstReplicas)
	history := int32(kruiseRevisionHistoryLimit)
	return kruiseDaemonSetSpec{
		Selector:             &metav1.LabelSelector{MatchLabels: agentLabels},
		Template:             agentTemplate(version),
		UpdateStrategy:       kruiseUpdateStrategy{Type: "RollingUpdate", RollingUpdate: update},
		BurstReplicas:        &burst,
		RevisionHistoryLimit: &history,
	}
}

// kruiseDaemonSet is the agent as an Advanced DaemonSet, run by Kruise's
// manager.
type kruiseDaemonSet struct {
	c  client.Client
	ds *unstructured.Unstructured
}

func (w *kruiseDaemonSet) create(ctx context.Context, namespace string, sc scenario, version string) error {
	return w.createSpec(ctx, namespace, kruiseSpec(sc, version))
}

// createSpec creates the Advanced DaemonSet of spec in namespace.
func (w *kruiseDaemonSet) createSpec(ctx context.Context, namespace string, spec kruiseDaemonSetSpec) error {
	encoded, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&spec)
	if err != nil {
		return fmt.Errorf("encoding the Advanced DaemonSet: %w", err)
	}
	w.ds = &unstructured.Unstructured{Object: map[string]any{"spec": encoded}}
	w.ds.SetGroupVersionKind(kruiseDaemonSetKind)
	w.ds.SetNamespace(namespace)
	w.ds.SetName("agent")
	if err := w.c.Create(ctx, w.ds); err != nil {
		return fmt.Errorf("creating the Advanced DaemonSet: %w", err)
	}
	return nil
}

func (w *kruiseDaemonSet) setImage(ctx context.Context, version string) error {
	return updateOnConflict(ctx, w.c, w.ds, func() error { return setFirstImage(w.ds, agentImage(version)) })
}

// setFirstImage sets the image of the first container of ds's template.
func setFirstImage(ds *unstructured.Unstructured, image string) error {
	path := []string{"spec", "template", "spec", "containers"}
	containers, _, err := unstructured.NestedSlice(ds.Object, path...)
	if err != nil {
		return fmt.Errorf("reading the containers of %s: %w", ds.GetName(), err)
	}
	if len(containers) == 0 {
		return fmt.Errorf("%s has no container", ds.GetName())
	}
	first, ok := containers[0].(map[string]any)
	if !ok {
		return fmt.Errorf("the first container of %s is a %T", ds.GetName(), containers[0])
	}
	first["image"] = image
	return unstructured.SetNestedSlice(ds.Object, containers, path...)
}

func (w *kruiseDaemonSet) rollout(ctx context.Context) (rolloutState, error) {
	s, generation, err := w.status(ctx)
	if err != nil {
		return rolloutState{}, err
	}
	return rolloutState{
		done: s.ObservedGeneration == generation && s.DesiredNumberScheduled > 0 &&
			s.UpdatedNumberScheduled == s.DesiredNumberScheduled && s.NumberAvailable == s.DesiredNumberScheduled &&
			s.CurrentNumberScheduled == s.DesiredNumberScheduled && s.NumberUnavailable == 0,
		summary: fmt.Sprintf("generation %d/%d, desired %d, current %d, updated %d, available %d",
			s.ObservedGeneration, generation, s.DesiredNumberScheduled, s.CurrentNumberScheduled,
			s.UpdatedNumberScheduled, s.NumberAvailable),
	}, nil
}

// status reads the Advanced DaemonSet's status and generation.
func (w *kruiseDaemonSet) status(ctx context.Context) (kruiseDaemonSetStatus, int64, error) {
	var s kruiseDaemonSetStatus
	ds := &unstructured.Unstructured{}
	ds.SetGroupVersionKind(kruiseDaemonSetKind)
	if err := w.c.Get(ctx, client.ObjectKeyFromObject(w.ds), ds); err != nil {
		return s, 0, fmt.Errorf("reading the Advanced DaemonSet: %w", err)
	}
	if status, ok := ds.Object["status"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(status, &s); err != nil {
			return s, 0, fmt.Errorf("decoding the status of the Advanced DaemonSet: %w", err)
		}
	}
	return s, ds.GetGeneration(), nil
}

func (w *kruiseDaemonSet) deleteAll(ctx context.Context) error {
	if w.ds == nil {
		return nil
	}
	return deleteWithRevisions(ctx, w.c, w.ds, "the Advanced DaemonSet")
}
