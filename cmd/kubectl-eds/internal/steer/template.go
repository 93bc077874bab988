package steer

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// templateYAML is a pod template as a person reads and writes it.
func templateYAML(template *corev1.PodTemplateSpec) (string, error) {
	data, err := yaml.Marshal(template)
	if err != nil {
		return "", fmt.Errorf("writing the pod template as YAML: %w", err)
	}
	return string(data), nil
}

// specTemplatePatch is the spec.template of template as a patch of the
// ExtendedDaemonSet: the part of the manifest to replace in git.
func specTemplatePatch(template *corev1.PodTemplateSpec) (string, error) {
	data, err := yaml.Marshal(map[string]any{"spec": map[string]any{"template": template}})
	if err != nil {
		return "", fmt.Errorf("writing the pod template as YAML: %w", err)
	}
	return string(data), nil
}
