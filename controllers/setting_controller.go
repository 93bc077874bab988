package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/outcome"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/store"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/overrides"
)

// SettingReconciler reports whether each ExtendedDaemonsetSetting is in
// force: Valid, or Error with the reason (a selector that does not parse,
// a container the template lacks, two settings claiming one node).
type SettingReconciler struct {
	client.Client
}

// SetupWithManager registers the reconciler; node label changes and
// sibling settings can change a setting's validity.
func (r *SettingReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("extendeddaemonsetsetting").
		For(&v1alpha1.ExtendedDaemonsetSetting{}).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.allSettings), builder.WithPredicates(store.NodePlacementChanged())).
		Watches(&v1alpha1.ExtendedDaemonsetSetting{}, handler.EnqueueRequestsFromMapFunc(r.allSettings)).
		// Only a template change (its containers) can change a setting's
		// validity; status writes are dropped.
		Watches(&v1alpha1.ExtendedDaemonSet{}, handler.EnqueueRequestsFromMapFunc(r.allSettings),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(r)
}

// Reconcile validates the setting among its namespace's settings.
func (r *SettingReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	setting := &v1alpha1.ExtendedDaemonsetSetting{}
	if err := r.Get(ctx, req.NamespacedName, setting); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := setting.DeepCopy()
	settings, nodes, templates, workloads, err := r.observe(ctx, setting.Namespace)
	if err != nil {
		return ctrl.Result{}, err
	}
	p := outcome.Progress{Phase: outcome.Done, Reason: "Valid", Message: "the overrides apply to pods created from now on"}
	setting.Status.Status, setting.Status.Error = v1alpha1.SettingValid, ""
	invalid := overrides.Validate(settings, nodes, templates)[setting.Name]
	if ref := setting.Spec.Reference; ref != nil && workloads[ref.Name] != "" {
		invalid = fmt.Errorf("ExtendedDaemonSet %s rolls out the pods of DaemonSet %s, which creates them from its own template: "+
			"resource overrides apply only to pods an ExtendedDaemonSet creates", ref.Name, workloads[ref.Name])
	}
	if err := invalid; err != nil {
		p = outcome.Progress{Phase: outcome.Stalled, Reason: "InvalidSetting", Message: err.Error()}
		setting.Status.Status, setting.Status.Error = v1alpha1.SettingError, err.Error()
	}
	setting.Status.ObservedGeneration = setting.Generation
	p.Apply(setting)
	if equality.Semantic.DeepEqual(before.Status, setting.Status) {
		return ctrl.Result{}, nil
	}
	switch err := outcome.PatchStatus(ctx, r.Client, before, setting); {
	case apierrors.IsConflict(err):
		return ctrl.Result{RequeueAfter: outcome.StaleReadRetry}, nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("patching status: %w", err)
	}
	return ctrl.Result{}, nil
}

// observe reads what settings are validated against: the namespace's
// settings, the nodes, and the templates of the ExtendedDaemonSets named,
// or the DaemonSet named by the workloadRef of those that have one.
func (r *SettingReconciler) observe(ctx context.Context, namespace string) (
	settings []v1alpha1.ExtendedDaemonsetSetting, nodes []*corev1.Node, templates map[string]*corev1.PodTemplateSpec, workloads map[string]string, err error,
) {
	if settings, err = store.ListSettings(ctx, r.Client, namespace); err != nil {
		return nil, nil, nil, nil, err
	}
	if nodes, err = store.ListNodes(ctx, r.Client); err != nil {
		return nil, nil, nil, nil, err
	}
	templates, workloads = map[string]*corev1.PodTemplateSpec{}, map[string]string{}
	for _, s := range settings {
		if s.Spec.Reference == nil || templates[s.Spec.Reference.Name] != nil {
			continue
		}
		eds := &v1alpha1.ExtendedDaemonSet{}
		err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: s.Spec.Reference.Name}, eds)
		switch {
		case err == nil && eds.Spec.WorkloadRef != nil:
			workloads[eds.Name] = eds.Spec.WorkloadRef.Name
		case err == nil:
			templates[eds.Name] = &eds.Spec.Template
		case !apierrors.IsNotFound(err):
			return nil, nil, nil, nil, fmt.Errorf("getting ExtendedDaemonSet %s: %w", s.Spec.Reference.Name, err)
		}
	}
	return settings, nodes, templates, workloads, nil
}

// allSettings maps any change to every setting of the namespace, or of
// every namespace for a node; settings are few.
func (r *SettingReconciler) allSettings(ctx context.Context, obj client.Object) []reconcile.Request {
	var list v1alpha1.ExtendedDaemonsetSettingList
	opts := []client.ListOption{}
	if obj.GetNamespace() != "" {
		opts = append(opts, client.InNamespace(obj.GetNamespace()))
	}
	if err := r.List(ctx, &list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing settings")
		return nil
	}
	return store.Requests(list.Items)
}
