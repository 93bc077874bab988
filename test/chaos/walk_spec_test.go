package chaos

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	actions "github.com/extendeddaemonset/extendeddaemonset/test/scenario"
)

// The walk's actions on the ExtendedDaemonSet itself: templates, steering
// values, pauses, rollbacks, settings.

// get reads the walk's ExtendedDaemonSet.
func (w *walker) get() *v1alpha1.ExtendedDaemonSet {
	w.s.t.Helper()
	eds := &v1alpha1.ExtendedDaemonSet{}
	w.s.g.Expect(w.s.env.client.Get(w.s.ctx, client.ObjectKey{Namespace: w.s.ns, Name: w.name}, eds)).To(gomega.Succeed())
	return eds
}

// update writes mutate's change to the walk's ExtendedDaemonSet, as a
// person or git would, and says why it did not when the API server
// refused it as invalid (a combination of settings its rules forbid).
func (w *walker) update(mutate func(*v1alpha1.ExtendedDaemonSet)) string {
	w.s.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		eds := w.get()
		mutate(eds)
		return w.s.env.client.Update(w.s.ctx, eds)
	})
	if apierrors.IsInvalid(err) {
		return "skipped: refused by the API server: " + err.Error()
	}
	w.s.g.Expect(err).NotTo(gomega.HaveOccurred())
	return ""
}

func annotate(eds *v1alpha1.ExtendedDaemonSet, key, value string) {
	if value == "" {
		delete(eds.Annotations, key)
		return
	}
	if eds.Annotations == nil {
		eds.Annotations = map[string]string{}
	}
	eds.Annotations[key] = value
}

// replicaSets are the walk's replica sets, newest revision first.
func (w *walker) replicaSets() []v1alpha1.ExtendedDaemonSetReplicaSet {
	w.s.t.Helper()
	var list v1alpha1.ExtendedDaemonSetReplicaSetList
	w.s.g.Expect(w.s.env.client.List(w.s.ctx, &list, client.InNamespace(w.s.ns),
		client.MatchingLabels{v1alpha1.ExtendedDaemonSetNameLabel: w.name})).To(gomega.Succeed())
	revision := func(rs v1alpha1.ExtendedDaemonSetReplicaSet) int {
		n, _ := strconv.Atoi(rs.Annotations[v1alpha1.RevisionAnnotation])
		return n
	}
	slices.SortFunc(list.Items, func(a, b v1alpha1.ExtendedDaemonSetReplicaSet) int { return revision(b) - revision(a) })
	return list.Items
}

// imageOf is the image of replica set name, empty when it is gone.
func (w *walker) imageOf(name string) string {
	for _, rs := range w.replicaSets() {
		if rs.Name == name && len(rs.Spec.Template.Spec.Containers) > 0 {
			return rs.Spec.Template.Spec.Containers[0].Image
		}
	}
	return ""
}

func (w *walker) setImage(image string) string {
	if why := w.update(func(eds *v1alpha1.ExtendedDaemonSet) { eds.Spec.Template.Spec.Containers[0].Image = image }); why != "" {
		return why
	}
	w.s.result.Rollouts++
	return image
}

func (w *walker) applyTemplate(a actions.Action) string {
	if a.LastFailed {
		if cs := w.get().Status.Canary; cs != nil && cs.Failed {
			if image := w.imageOf(cs.ReplicaSet); image != "" {
				return w.setImage(image) + " (the failed canary's)"
			}
		}
	}
	return w.setImage(walkImage(a.Template))
}

// rollback puts back the template of the index-th replica set before the
// current one, modulo those there are.
func (w *walker) rollback(index int) string {
	sets := w.replicaSets()
	if len(sets) < 2 {
		return "skipped: no earlier revision"
	}
	rs := sets[1+(index-1)%(len(sets)-1)]
	return w.setImage(rs.Spec.Template.Spec.Containers[0].Image) + " of " + rs.Name
}

// target resolves which replica set a steering value names.
func (w *walker) target(a actions.Action) string {
	switch a.Target {
	case actions.EarlierReplicaSet:
		sets := w.replicaSets()
		if len(sets) < 2 {
			return ""
		}
		return sets[1+(a.Index-1)%(len(sets)-1)].Name
	case actions.MadeUpName:
		w.tokens++
		return fmt.Sprintf("%s-madeup%d", w.name, w.tokens)
	}
	if cs := w.get().Status.Canary; cs != nil {
		return cs.ReplicaSet
	}
	if sets := w.replicaSets(); len(sets) > 0 {
		return sets[0].Name
	}
	return ""
}

func (w *walker) steer(a actions.Action) string {
	rs := w.target(a)
	if rs == "" {
		return "skipped: no such replica set yet"
	}
	value := rs
	annotation := ""
	var twin func(*v1alpha1.CanaryStrategy)
	switch a.Steer {
	case actions.Validate:
		annotation, twin = v1alpha1.CanaryValidatedAnnotation, func(c *v1alpha1.CanaryStrategy) { c.Validate = value }
	case actions.FailCanary:
		annotation, twin = v1alpha1.CanaryFailedAnnotation, func(c *v1alpha1.CanaryStrategy) { c.Fail = value }
	case actions.UnpauseAutoPause:
		annotation, twin = v1alpha1.CanaryUnpausedAnnotation, func(c *v1alpha1.CanaryStrategy) { c.Unpause = value }
	case actions.SkipStep:
		step := int32(1)
		if cs := w.get().Status.Canary; cs != nil && cs.ReplicaSet == rs && cs.Step > 0 {
			step = cs.Step
		}
		value = fmt.Sprintf("%s/%d", rs, step)
		annotation, twin = v1alpha1.CanarySkipStepAnnotation, func(c *v1alpha1.CanaryStrategy) { c.SkipStep = value }
	case actions.Retry:
		w.tokens++
		value = fmt.Sprintf("retry-%d", w.tokens)
		annotation, twin = v1alpha1.CanaryRetryAnnotation, func(c *v1alpha1.CanaryStrategy) { c.Retry = value }
	}
	if a.Via == actions.ViaAnnotation {
		return orSkipped(w.update(func(eds *v1alpha1.ExtendedDaemonSet) { annotate(eds, annotation, value) }), fmt.Sprintf("%s=%s", annotation, value))
	}
	if w.get().Spec.Strategy.Canary == nil {
		return "skipped: no canary strategy for the spec twin"
	}
	return orSkipped(w.update(func(eds *v1alpha1.ExtendedDaemonSet) {
		if eds.Spec.Strategy.Canary != nil {
			twin(eds.Spec.Strategy.Canary)
		}
	}), "spec twin "+value)
}

// orSkipped is what was done, unless why says it was skipped.
func orSkipped(why, done string) string {
	if why != "" {
		return why
	}
	return done
}

// pauseOrFreeze sets or clears a pause or the freeze, through its
// annotation or its spec field.
func (w *walker) pauseOrFreeze(a actions.Action) string {
	on := a.Kind == actions.PauseRollingUpdate || a.Kind == actions.Freeze || a.Kind == actions.PauseCanary
	value := ""
	if on {
		value = "true"
	}
	var annotation string
	var field func(*v1alpha1.ExtendedDaemonSet)
	switch a.Kind {
	case actions.PauseRollingUpdate, actions.UnpauseRollingUpdate:
		annotation, field = v1alpha1.RollingUpdatePausedAnnotation, func(e *v1alpha1.ExtendedDaemonSet) { e.Spec.Strategy.RollingUpdate.Paused = on }
	case actions.Freeze, actions.Unfreeze:
		annotation, field = v1alpha1.RolloutFrozenAnnotation, func(e *v1alpha1.ExtendedDaemonSet) { e.Spec.Strategy.RollingUpdate.Frozen = on }
	default:
		annotation, field = v1alpha1.CanaryPausedAnnotation, func(e *v1alpha1.ExtendedDaemonSet) {
			if e.Spec.Strategy.Canary != nil {
				e.Spec.Strategy.Canary.Paused = on
			}
		}
	}
	if a.Via == actions.ViaAnnotation {
		return w.update(func(eds *v1alpha1.ExtendedDaemonSet) { annotate(eds, annotation, value) })
	}
	return w.update(field)
}

// toggle turns a setting on or off in the spec. Settings the chaos
// environment cannot play are skipped.
func (w *walker) toggle(setting actions.Setting, on bool) string {
	switch setting {
	case actions.Analysis:
		return "skipped: the chaos environment has no Prometheus to measure"
	case actions.Handover:
		return "skipped: the chaos environment runs no DaemonSet controller to hand over from"
	}
	return w.update(func(eds *v1alpha1.ExtendedDaemonSet) {
		st := &eds.Spec.Strategy
		switch setting {
		case actions.CanaryStrategy:
			if !on {
				st.Canary = nil
			} else if st.Canary == nil {
				st.Canary = walkCanaryStrategy()
			}
		case actions.CanarySteps:
			if st.Canary == nil {
				return
			}
			if on {
				st.Canary.Replicas, st.Canary.Duration = nil, nil
				st.Canary.Steps = []v1alpha1.CanaryStep{
					{Replicas: intstr.FromInt32(1), Duration: &metav1.Duration{Duration: walkStep}},
					{Replicas: intstr.FromInt32(2), Pause: true},
					{Replicas: intstr.FromString("50%"), Duration: &metav1.Duration{Duration: walkStep}},
				}
			} else if st.Canary.Steps != nil {
				st.Canary.Steps = nil
				st.Canary.Replicas, st.Canary.Duration = walkCanaryStrategy().Replicas, walkCanaryStrategy().Duration
			}
		case actions.ManualValidation:
			if st.Canary == nil {
				return
			}
			if on {
				st.Canary.ValidationMode = v1alpha1.CanaryValidationManual
				st.Canary.Duration, st.Canary.NoRestartsDuration = nil, nil
			} else if st.Canary.ValidationMode == v1alpha1.CanaryValidationManual {
				st.Canary.ValidationMode = ""
				st.Canary.NoRestartsDuration = walkCanaryStrategy().NoRestartsDuration
				if st.Canary.Steps == nil {
					st.Canary.Duration = walkCanaryStrategy().Duration
				}
			}
		case actions.TopologyZones:
			st.RollingUpdate.Topology = nil
			if on {
				st.RollingUpdate.Topology = &v1alpha1.RollingUpdateTopology{Key: walkZoneLabel, Order: v1alpha1.TopologySequential,
					DomainBakeTime: &metav1.Duration{Duration: walkBake}}
			}
		case actions.InPlace:
			st.RollingUpdate.Type = v1alpha1.RollingUpdateStandard
			if on {
				st.RollingUpdate.Type = v1alpha1.RollingUpdateInPlaceIfPossible
			}
		}
	})
}
