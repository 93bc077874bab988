// Package overrides resolves per-node container resources: an
// ExtendedDaemonsetSetting whose node selector matches the node, then the
// node annotation resources.extendeddaemonset.io/<namespace>.<eds>.<container>,
// which wins. Everything here is a pure function of the objects given.
package overrides

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// Validate checks the settings of one namespace against the nodes and
// returns an error per invalid setting, by name: a selector that does not
// parse, or two settings of the same ExtendedDaemonSet claiming one node
// (both are invalid: neither can be trusted to win). Containers missing
// from the template are reported when template is given.
func Validate(settings []v1alpha1.ExtendedDaemonsetSetting, nodes []*corev1.Node, templates map[string]*corev1.PodTemplateSpec) map[string]error {
	errs := map[string]error{}
	selectors := map[string]labels.Selector{}
	for i := range settings {
		s := &settings[i]
		if s.Spec.Reference == nil || s.Spec.Reference.Name == "" {
			errs[s.Name] = fmt.Errorf("spec.reference.name is required")
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(&s.Spec.NodeSelector)
		if err != nil {
			errs[s.Name] = fmt.Errorf("spec.nodeSelector: %w", err)
			continue
		}
		selectors[s.Name] = sel
		if tpl := templates[s.Spec.Reference.Name]; tpl != nil {
			for _, c := range s.Spec.Containers {
				if !slices.ContainsFunc(tpl.Spec.Containers, func(t corev1.Container) bool { return t.Name == c.Name }) {
					errs[s.Name] = fmt.Errorf("container %q is not in the pod template of ExtendedDaemonSet %s", c.Name, s.Spec.Reference.Name)
				}
			}
		}
	}
	for i := range nodes {
		var claims []string
		for j := range settings {
			s := &settings[j]
			if sel, ok := selectors[s.Name]; ok && sel.Matches(labels.Set(nodes[i].Labels)) {
				claims = append(claims, s.Spec.Reference.Name+"/"+s.Name)
			}
		}
		slices.Sort(claims)
		for a := range claims {
			for b := a + 1; b < len(claims); b++ {
				refA, nameA, _ := strings.Cut(claims[a], "/")
				refB, nameB, _ := strings.Cut(claims[b], "/")
				if refA != refB {
					continue
				}
				for _, pair := range [][2]string{{nameA, nameB}, {nameB, nameA}} {
					if errs[pair[0]] == nil {
						errs[pair[0]] = fmt.Errorf("node %s is also claimed by setting %s for ExtendedDaemonSet %s", nodes[i].Name, pair[1], refA)
					}
				}
			}
		}
	}
	return errs
}

// ForNode returns the container resources to use for one ExtendedDaemonSet
// on one node, by container name: from the valid setting matching the node,
// then from the node's annotations. A malformed annotation is skipped and
// returned as an error; the rest still applies.
func ForNode(namespace, eds string, node *corev1.Node, valid []v1alpha1.ExtendedDaemonsetSetting) (map[string]corev1.ResourceRequirements, error) {
	out := map[string]corev1.ResourceRequirements{}
	for i := range valid {
		s := &valid[i]
		if s.Spec.Reference == nil || s.Spec.Reference.Name != eds {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(&s.Spec.NodeSelector)
		if err != nil || !sel.Matches(labels.Set(node.Labels)) {
			continue
		}
		for _, c := range s.Spec.Containers {
			out[c.Name] = c.Resources
		}
	}
	prefix := v1alpha1.NodeResourcesAnnotationPrefix + namespace + "." + eds + "."
	var errs []string
	keys := make([]string, 0, len(node.Annotations))
	for k := range node.Annotations {
		// Container names have no dot: a key with one more after the prefix
		// is that of an ExtendedDaemonSet whose name extends eds with a dot,
		// as AnnotatedExtendedDaemonSets reads it, and not ours to apply or
		// to report.
		if container, ok := strings.CutPrefix(k, prefix); ok && !strings.Contains(container, ".") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		var r corev1.ResourceRequirements
		if err := json.Unmarshal([]byte(node.Annotations[k]), &r); err != nil {
			errs = append(errs, fmt.Sprintf("annotation %s: %v", k, err))
			continue
		}
		out[strings.TrimPrefix(k, prefix)] = r
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("node %s: ignoring malformed resource overrides: %s", node.Name, strings.Join(errs, "; "))
	}
	return out, nil
}

// Apply sets the resources of the pod's containers named in resources.
func Apply(pod *corev1.Pod, resources map[string]corev1.ResourceRequirements) {
	for i := range pod.Spec.Containers {
		if r, ok := resources[pod.Spec.Containers[i].Name]; ok {
			pod.Spec.Containers[i].Resources = *r.DeepCopy()
		}
	}
}
