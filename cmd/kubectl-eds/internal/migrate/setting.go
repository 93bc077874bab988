package migrate

import (
	"strings"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

var datadogSettingSpecShape = shape{
	"reference":    {fields: shape{"apiVersion": kept, "kind": kept, "name": kept}},
	"nodeSelector": kept,
	"containers":   kept,
}

// datadogSettingReferences are the ExtendedDaemonSets, by namespace/name,
// that the original's ExtendedDaemonsetSettings among docs refer to.
func datadogSettingReferences(docs []document) map[string]bool {
	refs := map[string]bool{}
	for _, doc := range docs {
		if doc.object["apiVersion"] != datadogV1alpha1 || doc.object["kind"] != kindSetting {
			continue
		}
		namespace, _ := getPath(doc.object, "metadata", "namespace").(string)
		if name, ok := getPath(doc.object, "spec", "reference", "name").(string); ok {
			refs[joinName(namespace, name)] = true
		}
	}
	return refs
}

// datadogSetting turns an ExtendedDaemonsetSetting of the original project
// into ours: the same fields, with its reference to the ExtendedDaemonSet
// of this group.
func (m *migration) datadogSetting(src map[string]any) map[string]any {
	m.checkTopLevel(src)
	out := map[string]any{"apiVersion": ourV1alpha1, "kind": kindSetting}
	out["metadata"] = m.metadata(src, func(key string, _ any) string { return key })
	spec := m.reshape("spec", m.object("spec", src["spec"]), datadogSettingSpecShape)
	reference, _ := spec["reference"].(map[string]any)
	if name, _ := reference["name"].(string); name == "" {
		m.fail("spec.reference.name is missing: it names the ExtendedDaemonSet the setting applies to")
		return nil
	}
	// The original's sample spells the kind ExtendedDaemonset; only the
	// name is read, by either controller.
	if kind, _ := reference["kind"].(string); kind != "" && kind != kindExtendedDS && strings.EqualFold(kind, kindExtendedDS) {
		reference["kind"] = kindExtendedDS
	}
	if apiVersion, _ := reference["apiVersion"].(string); strings.HasPrefix(apiVersion, datadogGroup+"/") {
		reference["apiVersion"] = ourV1alpha1
	}
	out["spec"] = spec
	m.decodeStrictly(out, &v1alpha1.ExtendedDaemonsetSetting{})
	return out
}
