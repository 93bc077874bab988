package clitest

import (
	"os"
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

var env *Env

func TestMain(m *testing.M) { os.Exit(Main(m, &env)) }

// The played kubelet runs the controller's pods, so a rollout completes;
// a crash-tagged image restarts and is never ready.
func TestKubeletRunsTheControllersPods(t *testing.T) {
	s := env.NewScenario(t)
	nodes := s.Nodes(2)
	s.Create(s.NewExtendedDaemonSet("agent", "agent:v1"))
	eds := s.WaitRolledOut("agent")
	s.G.Expect(eds.Status.Desired).To(gomega.BeEquivalentTo(len(nodes)))

	s.Update("agent", func(eds *v1alpha1.ExtendedDaemonSet) { eds.Spec.Template.Spec.Containers[0].Image = "agent:v2-crash" })
	s.G.Eventually(func(g gomega.Gomega) {
		var pods corev1.PodList
		g.Expect(s.Client.List(s.Ctx, &pods, client.InNamespace(s.Namespace))).To(gomega.Succeed())
		var crashing int
		for _, p := range pods.Items {
			for _, st := range p.Status.ContainerStatuses {
				if st.Image == "agent:v2-crash" && st.RestartCount == CrashRestarts && !st.Ready {
					crashing++
				}
			}
		}
		g.Expect(crashing).To(gomega.Equal(1), "one node at a time, and the crashed pod never becomes available")
	}).Should(gomega.Succeed())
}

// Commands get --kubeconfig, and print to the streams they are given.
func TestRunPassesTheKubeconfig(t *testing.T) {
	if env == nil {
		t.Skip("needs envtest")
	}
	r := env.Run(t, nil, "--help")
	gomega.NewWithT(t).Expect(r.Code).To(gomega.Equal(cli.ExitOK))
	gomega.NewWithT(t).Expect(r.Out).To(gomega.ContainSubstring("kubectl eds"))
}
