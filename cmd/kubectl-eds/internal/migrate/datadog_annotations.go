package migrate

import (
	"fmt"
	"strings"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// The original project's annotation keys, from its api/v1alpha1/const.go.
const (
	datadogAnnotationPrefix = "extendeddaemonset.datadoghq.com/"
	// datadogNodeResourcesPrefix starts the original's node annotation
	// <namespace>.<eds>.<container> that overrides a container's
	// resources, with the same JSON value as ours.
	datadogNodeResourcesPrefix = "resources.extendeddaemonset.datadoghq.com/"
)

// datadogRenamed are the original's ExtendedDaemonSet annotations that
// mean the same here under another key, by their name after the prefix.
var datadogRenamed = map[string]string{
	"canary-paused":         v1alpha1.CanaryPausedAnnotation,
	"rolling-update-paused": v1alpha1.RollingUpdatePausedAnnotation,
	"rollout-frozen":        v1alpha1.RolloutFrozenAnnotation,
	"old-daemonset":         v1alpha1.OldDaemonSetAnnotation,
}

// datadogHolding are the renamed annotations that, while "true", hold the
// original's pods where they are.
var datadogHolding = map[string]string{
	v1alpha1.RollingUpdatePausedAnnotation: "kubectl eds resume",
	v1alpha1.RolloutFrozenAnnotation:       "kubectl eds unfreeze",
}

// datadogDropped are the original's annotations with no equivalent, and
// what to do instead.
var datadogDropped = map[string]string{
	"canary-valid": "its value names a canary replica set of the original controller, which this one never has; " +
		"`kubectl eds canary validate NAME` validates a canary here",
	"canary-unpaused":      "here an unpause names the canary replica set it is for; `kubectl eds canary unpause NAME` writes it",
	"canary-paused-reason": "this controller says why a canary paused in status.canary.reason",
}

// renameDatadogAnnotation returns the key an annotation of the original
// ExtendedDaemonSet takes here, or "" to leave it out; annotations of
// other tools keep their key.
func (m *migration) renameDatadogAnnotation(key string, value any) string {
	short, ours := strings.CutPrefix(key, datadogAnnotationPrefix)
	if !ours {
		return key
	}
	path := fmt.Sprintf("metadata.annotations[%s]", key)
	if to, ok := datadogRenamed[short]; ok {
		if resume, holds := datadogHolding[to]; holds && value == "true" {
			m.warn(path, fmt.Sprintf("renamed %s; while it is \"true\" the original's pods are not replaced: `%s NAME` lets them be", to, resume))
		}
		return to
	}
	if why, ok := datadogDropped[short]; ok {
		m.warn(path, "left out: "+why)
		return ""
	}
	m.warn(path, "unknown to this controller, left out")
	return ""
}
