// Package migrate is `kubectl eds migrate`: it turns manifests of apps/v1
// DaemonSets and of the original datadoghq.com/v1alpha1 ExtendedDaemonSets
// into extendeddaemonset.io/v1alpha1 ExtendedDaemonSets. Every field is
// mapped by name, so that a field the source has and this project lacks is
// told (a warning on the error stream) rather than silently lost, and the
// result is decoded strictly into our types before it is printed. With
// --ref it converts nothing: it writes an ExtendedDaemonSet whose
// workloadRef names a DaemonSet, of a manifest or of the cluster.
package migrate
