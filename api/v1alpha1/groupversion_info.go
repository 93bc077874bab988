// Package v1alpha1 holds the extendeddaemonset.io/v1alpha1 API: the
// ExtendedDaemonSet, its ExtendedDaemonSetReplicaSets and the
// ExtendedDaemonsetSettings that override container resources per node.
//
// +kubebuilder:object:generate=true
// +groupName=extendeddaemonset.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "extendeddaemonset.io", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds of this package with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the kinds of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
