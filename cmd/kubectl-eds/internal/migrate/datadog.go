package migrate

import (
	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// datadogSpecShape is the spec of the original project's ExtendedDaemonSet
// (github.com/DataDog/extendeddaemonset, api/v1alpha1). Its fields have the
// same names and meaning here, but for reconcileFrequency.
var datadogSpecShape = shape{
	"selector": kept,
	"template": kept,
	"strategy": {fields: shape{
		"rollingUpdate": {fields: shape{
			"maxUnavailable":            kept,
			"maxPodSchedulerFailure":    kept,
			"maxParallelPodCreation":    kept,
			"slowStartIntervalDuration": kept,
			"slowStartAdditiveIncrease": kept,
		}},
		"canary": {fields: shape{
			"replicas":             kept,
			"duration":             kept,
			"noRestartsDuration":   kept,
			"nodeSelector":         kept,
			"nodeAntiAffinityKeys": kept,
			"validationMode":       kept,
			"autoPause": {fields: shape{
				"enabled":              kept,
				"maxRestarts":          kept,
				"maxSlowStartDuration": kept,
			}},
			"autoFail": {fields: shape{
				"enabled":             kept,
				"maxRestarts":         kept,
				"maxRestartsDuration": kept,
				"canaryTimeout":       kept,
			}},
		}},
		"reconcileFrequency": dropped("this controller acts on every change it watches and at the deadlines it sets itself " +
			"(canary duration, timeouts), not on a period"),
	}},
}

// datadogExtendedDaemonSet turns an ExtendedDaemonSet of the original
// project into ours. The original's pods are handed over as the pods of a
// DaemonSet are: orphaned, then replaced node by node as old pods, which
// needs a selector that matches them.
func (m *migration) datadogExtendedDaemonSet(src map[string]any, name, namespace string) map[string]any {
	m.checkTopLevel(src)
	out := map[string]any{"apiVersion": ourV1alpha1, "kind": kindExtendedDS}
	out["metadata"] = m.metadata(src, m.renameDatadogAnnotation)
	spec := m.reshape("spec", m.object("spec", src["spec"]), datadogSpecShape)
	if spec["template"] == nil {
		m.fail("spec.template is missing")
		return nil
	}
	dropTemplateTimestamp(spec)
	m.writeOriginalDefaults(spec)
	selectsOldPods := m.selectTemplateLabels(spec)
	if selectsOldPods && getPath(out, "metadata", "annotations", v1alpha1.OldDaemonSetAnnotation) == nil {
		setAnnotation(out, v1alpha1.OldDaemonSetAnnotation, name)
	}
	out["spec"] = spec
	m.validateExtendedDaemonSet(out)
	m.datadogSteps(name, namespace, containerNames(spec), selectsOldPods)
	return out
}

// selectTemplateLabels makes the selector explicit: an unset selector
// meant the template labels to the original, and means them here for the
// pods the controller creates, but selects no pod left by another
// controller to replace. It says whether the selector can tell the
// original's pods.
func (m *migration) selectTemplateLabels(spec map[string]any) bool {
	if spec["selector"] != nil {
		return true
	}
	labels, _ := getPath(spec, "template", "metadata", "labels").(map[string]any)
	if len(labels) == 0 {
		m.warn("spec.selector", "unset, and the template has no labels: nothing tells the original's pods apart, "+
			"so they cannot be replaced node by node (see the steps below)")
		return false
	}
	spec["selector"] = map[string]any{"matchLabels": labels}
	m.note("spec.selector", "set to the template labels, as the original read it when unset, so that it matches the original's pods")
	return true
}

// containerNames are the names of the template's containers, in order.
func containerNames(spec map[string]any) []string {
	containers, _ := getPath(spec, "template", "spec", "containers").([]any)
	var names []string
	for _, c := range containers {
		if c, ok := c.(map[string]any); ok {
			if name, ok := c["name"].(string); ok && name != "" {
				names = append(names, name)
			}
		}
	}
	return names
}
