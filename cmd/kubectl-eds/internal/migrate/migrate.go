package migrate

import (
	"errors"
	"fmt"
	"strings"
)

// The kinds migrate takes.
const (
	appsV1            = "apps/v1"
	datadogV1alpha1   = "datadoghq.com/v1alpha1"
	datadogGroup      = "datadoghq.com"
	ourGroup          = "extendeddaemonset.io"
	ourV1alpha1       = ourGroup + "/v1alpha1"
	kindDaemonSet     = "DaemonSet"
	kindExtendedDS    = "ExtendedDaemonSet"
	kindSetting       = "ExtendedDaemonsetSetting"
	supportedSources  = "apps/v1 DaemonSets, and datadoghq.com/v1alpha1 ExtendedDaemonSets and ExtendedDaemonsetSettings"
	lastAppliedConfig = "kubectl.kubernetes.io/last-applied-configuration"
)

// outcome is what a migration made of its input.
type outcome struct {
	// Objects are the migrated objects, in the order of the input.
	Objects []map[string]any
	// Warnings are the fields of the input left out or changed in meaning,
	// one line each, naming the object and the field.
	Warnings []string
	// Notes are values written that the input left to the original
	// project's defaults, which differ from ours.
	Notes []string
	// Steps are what to do, object by object, to put the result in place.
	Steps []stepList
}

// stepList are the commands that put one migrated object in place.
type stepList struct {
	Title string
	Items []string
}

// migration is the work on one document.
type migration struct {
	position string
	// what names the object in messages: "DaemonSet kube-system/fluent-bit".
	what   string
	result *outcome
	errs   []error
	// settingsOf are the ExtendedDaemonSets, by namespace/name, that
	// ExtendedDaemonsetSettings of the input refer to.
	settingsOf map[string]bool
}

// migrateAll migrates every document of docs. Any error fails the whole: a
// manifest with some objects missing would be applied half.
func migrateAll(docs []document) (*outcome, error) {
	result := &outcome{}
	settingsOf := datadogSettingReferences(docs)
	var errs []error
	for _, doc := range docs {
		m := &migration{position: doc.position, what: doc.position, result: result, settingsOf: settingsOf}
		out := m.run(doc.object)
		if len(m.errs) > 0 {
			errs = append(errs, m.errs...)
			continue
		}
		result.Objects = append(result.Objects, out)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return result, nil
}

func (m *migration) run(src map[string]any) map[string]any {
	apiVersion, _ := src["apiVersion"].(string)
	kind, _ := src["kind"].(string)
	if apiVersion == "" || kind == "" {
		m.fail("not a Kubernetes object: apiVersion or kind is missing")
		return nil
	}
	name, namespace := m.identity(src)
	if name == "" {
		return nil
	}
	m.what = fmt.Sprintf("%s %s", kind, joinName(namespace, name))
	switch {
	case apiVersion == appsV1 && kind == kindDaemonSet:
		return m.daemonSet(src, name, namespace)
	case apiVersion == datadogV1alpha1 && kind == kindExtendedDS:
		return m.datadogExtendedDaemonSet(src, name, namespace)
	case apiVersion == datadogV1alpha1 && kind == kindSetting:
		return m.datadogSetting(src)
	case strings.HasPrefix(apiVersion, ourGroup+"/"):
		m.fail("already an %s object: nothing to migrate", ourGroup)
	case kind == kindDaemonSet:
		m.fail("a DaemonSet of apiVersion %s: migrate takes apps/v1 ones (`kubectl get daemonset NAME -o yaml` prints one)", apiVersion)
	default:
		m.fail("cannot migrate a %s of apiVersion %s: migrate takes %s", kind, apiVersion, supportedSources)
	}
	return nil
}

// identity reads metadata.name and metadata.namespace, failing without a
// name: the migrated object, and the steps that follow, need it.
func (m *migration) identity(src map[string]any) (name, namespace string) {
	meta, ok := src["metadata"].(map[string]any)
	if !ok {
		m.fail("metadata.name is missing")
		return "", ""
	}
	name, _ = meta["name"].(string)
	namespace, _ = meta["namespace"].(string)
	if name == "" {
		m.fail("metadata.name is missing (generateName cannot be used: the migration steps name the object)")
	}
	return name, namespace
}

func joinName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

func (m *migration) warn(path, message string) {
	m.result.Warnings = append(m.result.Warnings, fmt.Sprintf("%s: %s: %s", m.what, path, message))
}

func (m *migration) note(path, message string) {
	m.result.Notes = append(m.result.Notes, fmt.Sprintf("%s: %s: %s", m.what, path, message))
}

func (m *migration) fail(format string, args ...any) {
	where := m.position
	if m.what != m.position {
		where = fmt.Sprintf("%s (%s)", m.position, m.what)
	}
	m.errs = append(m.errs, fmt.Errorf("%s: %w", where, fmt.Errorf(format, args...)))
}

func (m *migration) steps(title string, items ...string) {
	m.result.Steps = append(m.result.Steps, stepList{Title: title, Items: items})
}
