// Package controllers holds one reconciler per kind of the
// extendeddaemonset.io API: each observes from the cache, plans with a pure
// function, acts, and writes status once.
package controllers

// Permissions of the manager, from which config/rbac is generated.
//
// +kubebuilder:rbac:groups=extendeddaemonset.io,resources=extendeddaemonsets;extendeddaemonsetreplicasets;extendeddaemonsetsettings,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=extendeddaemonset.io,resources=extendeddaemonsets/status;extendeddaemonsetreplicasets/status;extendeddaemonsetsettings/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=extendeddaemonset.io,resources=extendeddaemonsets/finalizers;extendeddaemonsetreplicasets/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
