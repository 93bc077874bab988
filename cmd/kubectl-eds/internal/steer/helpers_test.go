package steer_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/clitest"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/steer"
)

// name is the ExtendedDaemonSet every scenario makes.
const name = "agent"

// run runs kubectl eds with the steer commands in the scenario's namespace.
func run(s *clitest.Scenario, args ...string) clitest.Result {
	s.T.Helper()
	return env.Run(s.T, []cli.Group{steer.Commands}, append([]string{"-n", s.Namespace}, args...)...)
}

// ref is how messages name the scenario's ExtendedDaemonSet.
func ref(s *clitest.Scenario) string { return "ExtendedDaemonSet " + s.Namespace + "/" + name }

// command is a command line as messages suggest it.
func command(s *clitest.Scenario, verb string) string {
	return fmt.Sprintf("`kubectl eds %s -n %s %s`", verb, s.Namespace, name)
}

// expectOK checks that the command succeeded and printed want.
func expectOK(s *clitest.Scenario, r clitest.Result, want string) {
	s.T.Helper()
	s.G.Expect(r.Err).To(gomega.BeEmpty())
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK))
	s.G.Expect(r.Out).To(gomega.Equal(want + "\n"))
}

// expectRefused checks that the command failed, printed nothing on the
// output, and said why.
func expectRefused(s *clitest.Scenario, r clitest.Result, why string) {
	s.T.Helper()
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitFailed), "stdout: %s", r.Out)
	s.G.Expect(r.Out).To(gomega.BeEmpty())
	s.G.Expect(r.Err).To(gomega.HavePrefix("error: "))
	s.G.Expect(r.Err).To(gomega.ContainSubstring(why))
}

// rolledOut makes the ExtendedDaemonSet with image on nodes nodes, with no
// canary, and waits for it to run everywhere.
func rolledOut(t *testing.T, nodes int, image string) *clitest.Scenario {
	s := env.NewScenario(t)
	s.Nodes(nodes)
	s.Create(s.NewExtendedDaemonSet(name, image))
	s.WaitRolledOut(name)
	return s
}

// setImage changes the image of the ExtendedDaemonSet as a person would.
func setImage(s *clitest.Scenario, image string) {
	s.T.Helper()
	s.Update(name, func(eds *v1alpha1.ExtendedDaemonSet) { eds.Spec.Template.Spec.Containers[0].Image = image })
}

// runningCanary rolls agent:v1 out on three nodes with a one-node canary
// that runs for an hour, changes the image to agent:v2 and waits for the
// canary to run it.
func runningCanary(t *testing.T) (*clitest.Scenario, *v1alpha1.CanaryStatus) {
	return startCanary(t, "agent:v2", func(*v1alpha1.CanaryStrategy) {})
}

// startCanary is runningCanary with image as the canary's, and the canary
// strategy changed by tune.
func startCanary(t *testing.T, image string, tune func(*v1alpha1.CanaryStrategy)) (*clitest.Scenario, *v1alpha1.CanaryStatus) {
	s := env.NewScenario(t)
	s.Nodes(3)
	eds := s.NewExtendedDaemonSet(name, "agent:v1")
	one := intstr.FromInt32(1)
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{Replicas: &one, Duration: &metav1.Duration{Duration: time.Hour}}
	tune(eds.Spec.Strategy.Canary)
	s.Create(eds)
	s.WaitRolledOut(name)
	setImage(s, image)
	var canary *v1alpha1.CanaryStatus
	s.G.Eventually(func(g gomega.Gomega) {
		eds := s.Get(g, name)
		g.Expect(eds.Status.ObservedGeneration).To(gomega.Equal(eds.Generation))
		g.Expect(eds.Status.Canary).NotTo(gomega.BeNil())
		canary = eds.Status.Canary
		g.Expect(podImages(g, s)).To(gomega.Equal(map[string]int{"agent:v1": 2, image: 1}))
	}).Should(gomega.Succeed())
	return s, canary
}

// podImages counts the scenario's live pods by image.
func podImages(g gomega.Gomega, s *clitest.Scenario) map[string]int {
	var pods corev1.PodList
	g.Expect(s.Client.List(s.Ctx, &pods, client.InNamespace(s.Namespace))).To(gomega.Succeed())
	images := map[string]int{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			images[p.Spec.Containers[0].Image]++
		}
	}
	return images
}

// annotations are the ExtendedDaemonSet's annotations now.
func annotations(s *clitest.Scenario) map[string]string {
	return s.Get(s.G, name).Annotations
}

// replicaSetNames are the names of the ExtendedDaemonSet's replica sets by
// revision, from 1.
func replicaSetNames(s *clitest.Scenario) []string {
	s.T.Helper()
	var list v1alpha1.ExtendedDaemonSetReplicaSetList
	s.G.Expect(s.Client.List(s.Ctx, &list, client.InNamespace(s.Namespace))).To(gomega.Succeed())
	names := make([]string, len(list.Items))
	for _, rs := range list.Items {
		n, err := strconv.Atoi(rs.Annotations[v1alpha1.RevisionAnnotation])
		s.G.Expect(err).NotTo(gomega.HaveOccurred())
		s.G.Expect(n).To(gomega.BeNumerically("<=", len(names)), "revisions are 1 to %d", len(names))
		names[n-1] = rs.Name
	}
	s.G.Expect(slices.Contains(names, "")).To(gomega.BeFalse(), "revisions %v", names)
	return names
}

// threeRevisions rolls agent:v1, then v2, then v3 out on two nodes.
func threeRevisions(t *testing.T) *clitest.Scenario {
	s := rolledOut(t, 2, "agent:v1")
	for _, image := range []string{"agent:v2", "agent:v3"} {
		setImage(s, image)
		s.WaitRolledOut(name)
	}
	return s
}
