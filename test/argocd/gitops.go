package argocd

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// GitOpsHealth is what Flux (kstatus) and Argo CD (the shipped health
// check) make of an ExtendedDaemonSet.
func GitOpsHealth(eds *v1alpha1.ExtendedDaemonSet) (kstatus status.Status, health string, err error) {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(eds)
	if err != nil {
		return "", "", fmt.Errorf("converting %s: %w", eds.Name, err)
	}
	u := &unstructured.Unstructured{Object: raw}
	u.SetAPIVersion(v1alpha1.GroupVersion.String())
	u.SetKind("ExtendedDaemonSet")
	res, err := status.Compute(u)
	if err != nil {
		return "", "", fmt.Errorf("kstatus of %s: %w", eds.Name, err)
	}
	health, _, err = Health(u)
	return res.Status, health, err
}
