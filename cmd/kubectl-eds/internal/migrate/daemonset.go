package migrate

import (
	"fmt"
	"maps"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// daemonSetTemplateGeneration is written on every DaemonSet by the API
// server.
const daemonSetTemplateGeneration = "deprecated.daemonset.template.generation"

// daemonSetSpecShape is the spec of an apps/v1 DaemonSet, but for
// updateStrategy, which daemonSetStrategy maps.
var daemonSetSpecShape = shape{
	"selector":             kept,
	"template":             kept,
	"minReadySeconds":      kept,
	"revisionHistoryLimit": kept,
}

var daemonSetUpdateStrategyShape = shape{
	"rollingUpdate": {fields: shape{"maxUnavailable": kept, "maxSurge": kept}},
}

// daemonSet turns an apps/v1 DaemonSet into an ExtendedDaemonSet of the
// same name that replaces its pods (extendeddaemonset.io/old-daemonset).
func (m *migration) daemonSet(src map[string]any, name, namespace string) map[string]any {
	m.checkTopLevel(src)
	out := map[string]any{"apiVersion": ourV1alpha1, "kind": kindExtendedDS}
	out["metadata"] = m.metadata(src, func(key string, _ any) string {
		if key == daemonSetTemplateGeneration {
			return ""
		}
		return key
	})
	spec := m.object("spec", src["spec"])
	if spec == nil {
		return nil
	}
	rest := maps.Clone(spec)
	delete(rest, "updateStrategy")
	outSpec := m.reshape("spec", rest, daemonSetSpecShape)
	if rollingUpdate := m.daemonSetStrategy(spec["updateStrategy"]); len(rollingUpdate) > 0 {
		outSpec["strategy"] = map[string]any{"rollingUpdate": rollingUpdate}
	}
	if outSpec["template"] == nil {
		m.fail("spec.template is missing")
		return nil
	}
	dropTemplateTimestamp(outSpec)
	out["spec"] = outSpec
	setAnnotation(out, v1alpha1.OldDaemonSetAnnotation, name)
	m.validateExtendedDaemonSet(out)
	m.daemonSetSteps(name, namespace)
	return out
}

// daemonSetStrategy returns the rollingUpdate of the ExtendedDaemonSet
// that the DaemonSet's updateStrategy makes.
func (m *migration) daemonSetStrategy(value any) map[string]any {
	strategy := m.object("spec.updateStrategy", value)
	if strategy == nil {
		return nil
	}
	switch t := strategy["type"]; t {
	case nil, "RollingUpdate":
	case "OnDelete":
		m.warn("spec.updateStrategy.type", "OnDelete has no equivalent: an ExtendedDaemonSet replaces its pods itself, "+
			"node by node within spec.strategy.rollingUpdate.maxUnavailable (1 unless set); `kubectl eds pause NAME` "+
			"holds old pods until `kubectl eds resume NAME`, but not during this migration: paused, it would not replace the DaemonSet's pods either")
	default:
		m.warn("spec.updateStrategy.type", fmt.Sprintf("unknown type %v, left out", t))
	}
	rest := maps.Clone(strategy)
	delete(rest, "type")
	mapped := m.reshape("spec.updateStrategy", rest, daemonSetUpdateStrategyShape)
	rollingUpdate, _ := mapped["rollingUpdate"].(map[string]any)
	return rollingUpdate
}

// checkTopLevel warns about fields beside apiVersion, kind, metadata, spec
// and status, which no Kubernetes object has.
func (m *migration) checkTopLevel(src map[string]any) {
	for _, key := range sortedKeys(src) {
		switch key {
		case "apiVersion", "kind", "metadata", "spec", "status":
		default:
			m.warn(key, "unknown field, left out")
		}
	}
}
