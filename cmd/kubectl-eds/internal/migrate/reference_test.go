package migrate

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// --ref writes an ExtendedDaemonSet whose workloadRef names the DaemonSet,
// with neither template nor selector, and tells a DaemonSet that is not
// OnDelete where to set it: testdata/golden/ref-*.
func TestReferencesADaemonSetOfAManifest(t *testing.T) {
	for _, tc := range []struct{ input, daemonSet string }{
		{"daemonset-fluent-bit", "fluent-bit"},
		{"daemonset-ondelete", "node-exporter"},
	} {
		t.Run(tc.input, func(t *testing.T) {
			r := runMigrate(nil, "--ref", tc.daemonSet, "-f", filepath.Join("testdata", tc.input+".yaml"))
			gomega.NewWithT(t).Expect(r.code).To(gomega.Equal(cli.ExitOK), r.err)
			expectGolden(t, "ref-"+tc.input+".out.yaml", r.out)
			expectGolden(t, "ref-"+tc.input+".err.txt", r.err)
		})
	}
}

// The other documents of the input are left alone (a chart rendered
// whole); a name the input lacks, or has twice, is refused.
func TestReferencesTheDaemonSetNamed(t *testing.T) {
	g := gomega.NewWithT(t)
	input := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: agent}\n---\n" +
		"apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, namespace: a}\nspec: {updateStrategy: {type: OnDelete}}\n"
	r := runMigrate(strings.NewReader(input), "--ref", "agent", "-f", "-", "-o", "json")
	g.Expect(r.code).To(gomega.Equal(cli.ExitOK), r.err)
	g.Expect(r.out).To(gomega.MatchJSON(`{"apiVersion": "extendeddaemonset.io/v1alpha1", "kind": "ExtendedDaemonSet",
		"metadata": {"name": "agent", "namespace": "a"},
		"spec": {"workloadRef": {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent"}}}`))
	g.Expect(r.err).NotTo(gomega.ContainSubstring("warning"))

	r = runMigrate(strings.NewReader(input), "--ref", "other", "-f", "-")
	g.Expect(r.code).To(gomega.Equal(cli.ExitFailed))
	g.Expect(r.err).To(gomega.Equal(`error: standard input: no apps/v1 DaemonSet named "other": --ref names the DaemonSet to reference` + "\n"))

	twice := input + "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, namespace: b}\nspec: {}\n"
	r = runMigrate(strings.NewReader(twice), "--ref", "agent", "-f", "-")
	g.Expect(r.code).To(gomega.Equal(cli.ExitFailed))
	g.Expect(r.err).To(gomega.ContainSubstring(`2 apps/v1 DaemonSets named "agent" (namespaces "a", "b"): give --ref a manifest that holds one`))
}

// Without -f, --ref reads the DaemonSet from the cluster; the API server
// takes the ExtendedDaemonSet written as it is.
func TestReferencesADaemonSetOfTheCluster(t *testing.T) {
	s := env.NewScenario(t)
	labels := map[string]string{"app": "agent"}
	two := intstr.FromInt32(2)
	s.Create(&appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: s.Namespace},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "agent:v1"}}},
			},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{
				Type: appsv1.RollingUpdateDaemonSetStrategyType, RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &two},
			},
			MinReadySeconds: 10,
		},
	})

	r := env.Run(t, []cli.Group{Commands}, "migrate", "--ref", "agent", "-n", s.Namespace)
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
	s.G.Expect(r.Out).To(gomega.MatchYAML(fmt.Sprintf(`apiVersion: extendeddaemonset.io/v1alpha1
kind: ExtendedDaemonSet
metadata: {name: agent, namespace: %s}
spec:
  workloadRef: {apiVersion: apps/v1, kind: DaemonSet, name: agent}
  minReadySeconds: 10
  strategy: {rollingUpdate: {maxUnavailable: 2}}
`, s.Namespace)))
	s.G.Expect(r.Err).To(gomega.ContainSubstring(fmt.Sprintf("warning: DaemonSet %s/agent: spec.updateStrategy.type: RollingUpdate, but must be OnDelete", s.Namespace)))
	s.G.Expect(r.Err).To(gomega.ContainSubstring("--set updateStrategy.type=OnDelete"))

	objects := decodeManifest(s.G, r.Out)
	s.G.Expect(objects).To(gomega.HaveLen(1))
	s.G.Expect(s.Client.Create(s.Ctx, objects[0], client.FieldValidation(metav1.FieldValidationStrict))).To(gomega.Succeed())
	t.Cleanup(func() { _ = s.Client.Delete(s.Ctx, objects[0]) })

	r = env.Run(t, []cli.Group{Commands}, "migrate", "--ref", "gone", "-n", s.Namespace)
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitFailed))
	s.G.Expect(r.Err).To(gomega.ContainSubstring(fmt.Sprintf(`DaemonSet "gone" not found in namespace %q`, s.Namespace)))
}
