package inspect_test

import (
	"strings"
	"testing"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// An ExtendedDaemonSet whose workloadRef names a DaemonSet has an empty
// spec.template, and the DaemonSet's pods carry none of its labels: get
// shows the DaemonSet's images, and pods and status its pods, each of the
// replica set of its controller-revision-hash.
func TestGetPodsAndStatusOfAReferencingExtendedDaemonSet(t *testing.T) {
	t.Parallel()
	s := env.NewScenario(t)
	nodes := s.Nodes(2)
	s.RunDaemonSet(s.NewDaemonSet("agent", "agent:v1"))
	eds := s.NewReferencingExtendedDaemonSet("agent", "agent")
	eds.Spec.Strategy.Canary = canaryOnFirstNode(s)
	s.Create(eds)
	s.WaitRolledOut("agent")

	r := run(s, "get", "-o", "wide")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
	s.G.Expect(r.Out).To(gomega.MatchRegexp(`(?m)^agent .* agent +agent:v1$`))

	s.UpdateDaemonSet("agent", func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Image = "agent:v2" })
	var st v1alpha1.ExtendedDaemonSetStatus
	s.G.Eventually(func(g gomega.Gomega) {
		st = s.Get(g, "agent").Status
		g.Expect(st.Canary).NotTo(gomega.BeNil())
		g.Expect(s.DaemonSetPods(g, "agent")).To(gomega.Equal(map[string]int{"agent:v1": 1, "agent:v2": 1}))
		r = run(s, "status", "agent")
		g.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
		g.Expect(r.Out).To(gomega.MatchRegexp(`(?m)^  %s +agent-\S+ +%s +canary +1/1 +Running +0$`, nodes[0], st.Canary.ReplicaSet))
	}).Should(gomega.Succeed())

	s.G.Expect(r.Out).To(gomega.ContainSubstring("\nWorkload:     DaemonSet agent: its template and pods are rolled out\n"))

	r = run(s, "get", "-o", "wide")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
	s.G.Expect(r.Out).To(gomega.MatchRegexp(`(?m)^agent .* agent +agent:v2$`), "the DaemonSet's current template")

	r = run(s, "pods", "agent")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
	lines := strings.Split(strings.TrimSpace(r.Out), "\n")
	s.G.Expect(lines).To(gomega.HaveLen(3), "a header and a pod per node: %s", r.Out)
	s.G.Expect(lines[1]).To(gomega.MatchRegexp(`^agent-\S+ +%s +%s +canary +1/1 +Running +0 +`, nodes[0], st.Canary.ReplicaSet))
	s.G.Expect(lines[2]).To(gomega.MatchRegexp(`^agent-\S+ +%s +%s +active +1/1 +Running +0 +`, nodes[1], st.ActiveReplicaSet))

	r = run(s, "pods", "agent", "--select", "active", "-o", "yaml")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
	var list corev1.PodList
	s.G.Expect(yaml.Unmarshal([]byte(r.Out), &list)).To(gomega.Succeed())
	s.G.Expect(list.Items).To(gomega.HaveLen(1))
	s.G.Expect(list.Items[0].Spec.NodeName).To(gomega.Equal(nodes[1]))
	s.G.Expect(list.Items[0].Labels).NotTo(gomega.HaveKey(v1alpha1.ExtendedDaemonSetReplicaSetNameLabel), "the pods are printed as they are")
}

// A workloadRef naming no DaemonSet: status still shows the
// ExtendedDaemonSet, pods says what is missing.
func TestAReferencingExtendedDaemonSetWithoutItsDaemonSet(t *testing.T) {
	t.Parallel()
	s := env.NewScenario(t)
	s.Create(s.NewReferencingExtendedDaemonSet("agent", "gone"))

	r := run(s, "status", "agent")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
	s.G.Expect(r.Out).To(gomega.HavePrefix("Name:"))

	r = run(s, "get", "-o", "wide")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
	s.G.Expect(r.Out).To(gomega.MatchRegexp(`(?m)^agent .* <none> +<none>$`))

	r = run(s, "pods", "agent")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitFailed))
	s.G.Expect(r.Err).To(gomega.ContainSubstring(`DaemonSet "gone", which spec.workloadRef of ExtendedDaemonSet agent names, not found in namespace "` + s.Namespace + `"`))
}
