package inspect_test

import (
	"fmt"
	"strings"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/clitest"
)

// normalize makes output comparable from run to run: the scenario's
// generated names become stable ones (the namespace NS, a replica set
// <eds>-rev<revision>, a pod <replica set>-pod<node index>), ages <age>,
// and columns are aligned again.
func normalize(s *clitest.Scenario, out string) string {
	s.T.Helper()
	var sets v1alpha1.ExtendedDaemonSetReplicaSetList
	s.G.Expect(s.Client.List(s.Ctx, &sets, client.InNamespace(s.Namespace))).To(gomega.Succeed())
	setNames := map[string]string{}
	var pairs []string
	for _, ers := range sets.Items {
		stable := fmt.Sprintf("%s-rev%s", ers.Labels[v1alpha1.ExtendedDaemonSetNameLabel], ers.Annotations[v1alpha1.RevisionAnnotation])
		setNames[ers.Name] = stable
		// The template holds the namespace (in its node selector), and so
		// does its hash.
		pairs = append(pairs, ers.Spec.TemplateGeneration, stable+"-hash")
	}
	var pods corev1.PodList
	s.G.Expect(s.Client.List(s.Ctx, &pods, client.InNamespace(s.Namespace))).To(gomega.Succeed())
	// Longer names first: a pod's name starts with its replica set's, a
	// replica set's with its ExtendedDaemonSet's, a node's with the
	// namespace.
	for _, pod := range pods.Items {
		set := pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel]
		node := strings.TrimPrefix(pod.Spec.NodeName, s.Namespace+"-")
		pairs = append(pairs, pod.Name, fmt.Sprintf("%s-pod%s", setNames[set], node))
	}
	for name, stable := range setNames {
		pairs = append(pairs, name, stable)
	}
	pairs = append(pairs, s.Namespace, "NS")
	return clitest.Retabulate(clitest.NormalizeAges(strings.NewReplacer(pairs...).Replace(out)))
}
