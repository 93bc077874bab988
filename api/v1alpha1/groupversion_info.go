// Package v1alpha1 holds the extendeddaemonset.io/v1alpha1 API: the
// ExtendedDaemonSet, its ExtendedDaemonSetReplicaSets and the
// ExtendedDaemonsetSettings that override container resources per node.
// It depends only on API packages so that any client can import it.
//
// +kubebuilder:object:generate=true
// +groupName=extendeddaemonset.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "extendeddaemonset.io", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds of this package with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the kinds of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&ExtendedDaemonSet{}, &ExtendedDaemonSetList{},
		&ExtendedDaemonSetReplicaSet{}, &ExtendedDaemonSetReplicaSetList{},
		&ExtendedDaemonsetSetting{}, &ExtendedDaemonsetSettingList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
