package migrate

import (
	"errors"
	"fmt"
	"strings"
)

// updateStrategyOnDelete is the only updateStrategy.type of a DaemonSet an
// ExtendedDaemonSet rolls out: with any other, the DaemonSet's own
// controller would roll every template change out at once.
const updateStrategyOnDelete = "OnDelete"

// migrateReference writes, for the apps/v1 DaemonSet named name among
// docs, an ExtendedDaemonSet whose workloadRef names it, instead of one
// that replaces it. The other documents are left alone: a chart rendered
// whole may be the input.
func migrateReference(docs []document, name string) (*outcome, error) {
	var found []document
	var namespaces []string
	for _, doc := range docs {
		apiVersion, _ := doc.object["apiVersion"].(string)
		kind, _ := doc.object["kind"].(string)
		meta, _ := doc.object["metadata"].(map[string]any)
		if apiVersion != appsV1 || kind != kindDaemonSet || meta["name"] != name {
			continue
		}
		found = append(found, doc)
		namespace, _ := meta["namespace"].(string)
		namespaces = append(namespaces, fmt.Sprintf("%q", namespace))
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no apps/v1 DaemonSet named %q: --ref names the DaemonSet to reference", name)
	case 1:
	default:
		return nil, fmt.Errorf("%d apps/v1 DaemonSets named %q (namespaces %s): give --ref a manifest that holds one",
			len(found), name, strings.Join(namespaces, ", "))
	}
	result := &outcome{}
	m := &migration{position: found[0].position, what: found[0].position, result: result}
	out := m.reference(found[0].object)
	if len(m.errs) > 0 {
		return nil, errors.Join(m.errs...)
	}
	result.Objects = append(result.Objects, out)
	return result, nil
}

// reference is the ExtendedDaemonSet of the DaemonSet src's name whose
// workloadRef names it: the DaemonSet keeps its selector, template and
// pods, and the ExtendedDaemonSet has neither (the schema refuses them
// beside a workloadRef). What the DaemonSet's rolling update said of pace
// becomes the ExtendedDaemonSet's, since the DaemonSet's own is OnDelete.
func (m *migration) reference(src map[string]any) map[string]any {
	name, namespace := m.identity(src)
	if name == "" {
		return nil
	}
	m.what = fmt.Sprintf("%s %s", kindDaemonSet, joinName(namespace, name))
	spec := m.object("spec", src["spec"])
	strategy := m.object("spec.updateStrategy", spec["updateStrategy"])
	if spec == nil || strategy == nil {
		return nil
	}
	meta := map[string]any{"name": name}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	outSpec := map[string]any{"workloadRef": map[string]any{"apiVersion": appsV1, "kind": kindDaemonSet, "name": name}}
	if v := spec["minReadySeconds"]; v != nil {
		outSpec["minReadySeconds"] = v
	}
	rollingUpdate := m.object("spec.updateStrategy.rollingUpdate", strategy["rollingUpdate"])
	if v := rollingUpdate["maxUnavailable"]; v != nil {
		outSpec["strategy"] = map[string]any{"rollingUpdate": map[string]any{"maxUnavailable": v}}
	}
	if v := rollingUpdate["maxSurge"]; v != nil && !isZero(v) {
		m.warn("spec.updateStrategy.rollingUpdate.maxSurge", "left out: the DaemonSet creates its pods itself, one per node, "+
			"so no pod runs beside the one it replaces")
	}
	updateType, _ := strategy["type"].(string)
	if updateType != updateStrategyOnDelete {
		m.warn("spec.updateStrategy.type", onDeleteHint(name, updateType))
	}
	out := map[string]any{"apiVersion": ourV1alpha1, "kind": kindExtendedDS, "metadata": meta, "spec": outSpec}
	m.validateExtendedDaemonSet(out)
	m.referenceSteps(name, namespace, updateType == updateStrategyOnDelete)
	return out
}

// onDeleteHint says that the DaemonSet must be updated OnDelete, and
// where to set it.
func onDeleteHint(name, updateType string) string {
	if updateType == "" {
		updateType = "unset (RollingUpdate)"
	}
	return fmt.Sprintf("%s, but must be %s: its own controller would otherwise roll every template change out at once, "+
		"and the ExtendedDaemonSet is Stalled (InvalidSpec) until it is. Set spec.updateStrategy.type: %s on DaemonSet %s "+
		"(for a Helm chart, its updateStrategy value, such as --set updateStrategy.type=%s; "+
		"README's \"Canary a DaemonSet you already have\" lists the values of common charts)",
		updateType, updateStrategyOnDelete, updateStrategyOnDelete, name, updateStrategyOnDelete)
}

// isZero says whether an int-or-percent value is 0 or 0%.
func isZero(v any) bool {
	s := strings.TrimSuffix(fmt.Sprint(v), "%")
	return s == "0"
}

// referenceSteps are the steps of README's "Canary a DaemonSet you
// already have".
func (m *migration) referenceSteps(name, namespace string, onDelete bool) {
	ns := namespaceFlag(namespace)
	var items []string
	if !onDelete {
		items = append(items, fmt.Sprintf("set spec.updateStrategy.type: %s on the DaemonSet where it is kept (git, or the chart's "+
			"updateStrategy value); at once, `kubectl patch daemonset %s%s -p '{\"spec\":{\"updateStrategy\":{\"type\":\"%s\",\"rollingUpdate\":null}}}'`, "+
			"which the next sync of git or Helm undoes unless they change too", updateStrategyOnDelete, name, ns, updateStrategyOnDelete))
	}
	items = append(items,
		"kubectl apply -f <the manifest printed>, after adding the canary you want to spec.strategy.canary (replicas or steps, "+
			"duration, analysis): without one, a template change is rolled out node by node within maxUnavailable",
		fmt.Sprintf("change the DaemonSet's template where it is kept, as before: the ExtendedDaemonSet rolls each change out, "+
			"and `kubectl eds status %s%s --watch` follows it", name, ns),
	)
	m.steps(fmt.Sprintf("To roll the changes of DaemonSet %s out through the ExtendedDaemonSet, which never writes the DaemonSet:",
		joinName(namespace, name)), items...)
}
