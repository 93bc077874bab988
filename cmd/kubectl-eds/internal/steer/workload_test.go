package steer_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/clitest"
)

// An ExtendedDaemonSet whose workloadRef names a DaemonSet has an empty
// spec.template: the template it rolls out is the DaemonSet's, and its
// revisions are the DaemonSet's, each with a replica set named
// agent-<controller-revision-hash>.

// daemonSetRef is how messages name the scenario's DaemonSet.
func daemonSetRef(s *clitest.Scenario) string { return "DaemonSet " + s.Namespace + "/" + name }

// setDaemonSetImage changes the DaemonSet's image as its owner would.
func setDaemonSetImage(s *clitest.Scenario, image string) {
	s.T.Helper()
	s.UpdateDaemonSet(name, func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Image = image })
}

// getDaemonSet reads the scenario's DaemonSet.
func getDaemonSet(g gomega.Gomega, s *clitest.Scenario) *appsv1.DaemonSet {
	ds := &appsv1.DaemonSet{}
	g.Expect(s.Client.Get(s.Ctx, types.NamespacedName{Namespace: s.Namespace, Name: name}, ds)).To(gomega.Succeed())
	return ds
}

// referencing runs the DaemonSet agent with agent:v1 on nodes nodes and an
// ExtendedDaemonSet that references it, tuned by tune, and waits for it to
// be rolled out.
func referencing(t *testing.T, nodes int, tune func(*v1alpha1.ExtendedDaemonSet)) *clitest.Scenario {
	s := env.NewScenario(t)
	s.Nodes(nodes)
	s.RunDaemonSet(s.NewDaemonSet(name, "agent:v1"))
	eds := s.NewReferencingExtendedDaemonSet(name, name)
	tune(eds)
	s.Create(eds)
	s.WaitRolledOut(name)
	return s
}

// referencingCanary is referencing on three nodes with a one-node canary
// that runs for an hour, once the DaemonSet's image changed to agent:v2
// and the canary runs it.
func referencingCanary(t *testing.T) (*clitest.Scenario, *v1alpha1.ExtendedDaemonSetStatus) {
	s := referencing(t, 3, func(eds *v1alpha1.ExtendedDaemonSet) {
		one := intstr.FromInt32(1)
		eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{Replicas: &one, Duration: &metav1.Duration{Duration: time.Hour}}
	})
	setDaemonSetImage(s, "agent:v2")
	var st v1alpha1.ExtendedDaemonSetStatus
	s.G.Eventually(func(g gomega.Gomega) {
		eds := s.Get(g, name)
		g.Expect(eds.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(eds.Status.Canary.Nodes).To(gomega.HaveLen(1))
		g.Expect(s.DaemonSetPods(g, name)).To(gomega.Equal(map[string]int{"agent:v1": 2, "agent:v2": 1}))
		st = eds.Status
	}).Should(gomega.Succeed())
	return s, &st
}

// rollback prints the stable template as the DaemonSet's spec.template
// for git, and writes nothing; --write-daemonset writes it into the
// DaemonSet, and the canary's node comes back to the stable revision.
func TestRollbackOfAReferencingExtendedDaemonSet(t *testing.T) {
	t.Parallel()
	s, st := referencingCanary(t)
	active := &v1alpha1.ExtendedDaemonSetReplicaSet{}
	s.G.Expect(s.Client.Get(s.Ctx, types.NamespacedName{Namespace: s.Namespace, Name: st.ActiveReplicaSet}, active)).To(gomega.Succeed())
	before := getDaemonSet(s.G, s)

	r := run(s, "history", name)
	s.G.Expect(r.Code).To(gomega.BeZero(), r.Err)
	s.G.Expect(r.Out).To(gomega.MatchRegexp(`(?m)^1 +%s +active +agent=agent:v1 `, st.ActiveReplicaSet))
	s.G.Expect(r.Out).To(gomega.MatchRegexp(`(?m)^2 +%s +canary +agent=agent:v2 `, st.Canary.ReplicaSet))

	for _, args := range [][]string{{"rollback", name}, {"rollback", name, "--dry-run"}} {
		r := run(s, args...)
		s.G.Expect(r.Code).To(gomega.BeZero(), r.Err)
		header, body, _ := strings.Cut(r.Out, "\n")
		s.G.Expect(header).To(gomega.Equal(fmt.Sprintf("# spec.template of revision 1 of %s (replica set %s, active) for %s: "+
			"put it in the DaemonSet's manifest in git (or the chart values that render it); nothing was written "+
			"(--write-daemonset writes it into the DaemonSet)", ref(s), st.ActiveReplicaSet, daemonSetRef(s))))
		var patch struct {
			Spec struct {
				Template corev1.PodTemplateSpec `json:"template"`
			} `json:"spec"`
		}
		s.G.Expect(yaml.UnmarshalStrict([]byte(body), &patch)).To(gomega.Succeed())
		s.G.Expect(equality.Semantic.DeepEqual(&patch.Spec.Template, &active.Spec.Template)).To(gomega.BeTrue(), "printed:\n%s", body)
		s.G.Expect(patch.Spec.Template.Spec.Containers[0].Image).To(gomega.Equal("agent:v1"))
	}
	// The DaemonSet's status keeps moving (its controller reports the
	// canary's pod turning ready), so what is compared is what a rollback
	// would write: the spec and the metadata.
	after := getDaemonSet(s.G, s)
	s.G.Expect(after.Generation).To(gomega.Equal(before.Generation), "nothing is written without --write-daemonset")
	s.G.Expect(equality.Semantic.DeepEqual(after.Spec, before.Spec)).To(gomega.BeTrue(), "nothing is written without --write-daemonset")
	s.G.Expect(after.Labels).To(gomega.Equal(before.Labels), "nothing is written without --write-daemonset")
	s.G.Expect(after.Annotations).To(gomega.Equal(before.Annotations), "nothing is written without --write-daemonset")
	s.G.Expect(s.Get(s.G, name).Spec.Template.Spec.Containers).To(gomega.BeEmpty())

	expectOK(s, run(s, "rollback", name, "--write-daemonset"),
		fmt.Sprintf("%s rolled back to revision 1 (%s: agent=agent:v1) of %s: the controller brings the nodes that run a newer revision back to it, "+
			"within maxUnavailable and without a canary, as it is the stable revision; if git (Flux, Argo CD) or Helm holds the DaemonSet, "+
			"put the same template there (`kubectl eds rollback -n %s %s --to-revision 1` prints it) or the next sync undoes the rollback",
			daemonSetRef(s), st.ActiveReplicaSet, ref(s), s.Namespace, name))
	s.G.Expect(getDaemonSet(s.G, s).Spec.Template.Spec.Containers[0].Image).To(gomega.Equal("agent:v1"))
	eds := s.WaitRolledOut(name)
	s.G.Expect(eds.Status.ActiveReplicaSet).To(gomega.Equal(st.ActiveReplicaSet),
		"the template written back is revision 1's, so the DaemonSet's revision and its replica set are taken up again")
	s.G.Eventually(func(g gomega.Gomega) {
		g.Expect(s.DaemonSetPods(g, name)).To(gomega.Equal(map[string]int{"agent:v1": 3}))
	}).Should(gomega.Succeed())
	s.G.Expect(s.Get(s.G, name).Spec.Template.Spec.Containers).To(gomega.BeEmpty(), "the ExtendedDaemonSet's spec is never written")

	expectRefused(s, run(s, "rollback", name, "--to-revision", "1", "--write-daemonset"),
		fmt.Sprintf("revision 1 (%s: agent=agent:v1) already is the active revision of %s: there is nothing to roll back", st.ActiveReplicaSet, ref(s)))
}

// --write-daemonset is for an ExtendedDaemonSet that references a
// DaemonSet.
func TestRollbackWriteDaemonSetNeedsAWorkloadRef(t *testing.T) {
	t.Parallel()
	s := env.NewScenario(t)
	s.Create(s.NewExtendedDaemonSet(name, "agent:v1"))
	expectRefused(s, run(s, "rollback", name, "--write-daemonset"),
		fmt.Sprintf("--write-daemonset writes into the DaemonSet an ExtendedDaemonSet's spec.workloadRef names; %s has a template of its own, "+
			"which rollback writes without it", ref(s)))
}

// Failing the canary of a referencing ExtendedDaemonSet stops the rollout:
// the DaemonSet would recreate a deleted pod at its failed template.
func TestCanaryFailOfAReferencingExtendedDaemonSetStopsTheRollout(t *testing.T) {
	t.Parallel()
	s, st := referencingCanary(t)

	expectOK(s, run(s, "canary", "fail", name),
		fmt.Sprintf("canary %s of %s failed: no other pod of %s is deleted, and its nodes keep its revision until the DaemonSet's "+
			"template is reverted (%s prints the active one's, for git); %s starts it again",
			st.Canary.ReplicaSet, ref(s), daemonSetRef(s), command(s, "rollback"), command(s, "canary retry")))
	s.G.Eventually(func(g gomega.Gomega) {
		c := s.Get(g, name).Status.Canary
		g.Expect(c).NotTo(gomega.BeNil())
		g.Expect(c.Failed).To(gomega.BeTrue())
	}).Should(gomega.Succeed())
	s.G.Consistently(func(g gomega.Gomega) {
		g.Expect(s.DaemonSetPods(g, name)).To(gomega.Equal(map[string]int{"agent:v1": 2, "agent:v2": 1}))
	}, time.Second).Should(gomega.Succeed())
}

// Once the DaemonSet's template is back to an old revision's, history
// shows that revision pending and diff the change, both read from the
// DaemonSet: here the DaemonSet is left on RollingUpdate, so the
// ExtendedDaemonSet is stalled and the revision stays pending.
func TestHistoryAndDiffReadTheDaemonSetsTemplate(t *testing.T) {
	t.Parallel()
	s := referencing(t, 2, func(*v1alpha1.ExtendedDaemonSet) {})
	setDaemonSetImage(s, "agent:v2")
	s.G.Eventually(func(g gomega.Gomega) {
		g.Expect(s.DaemonSetPods(g, name)).To(gomega.Equal(map[string]int{"agent:v2": 2}))
	}).Should(gomega.Succeed())
	eds := s.WaitRolledOut(name)
	names := replicaSetNames(s)
	s.G.Expect(names).To(gomega.HaveLen(2))
	s.G.Expect(eds.Status.ActiveReplicaSet).To(gomega.Equal(names[1]))

	expectOK(s, run(s, "diff", name),
		fmt.Sprintf("no difference: %s runs the template of %s, revision 2 (%s)", ref(s), daemonSetRef(s), names[1]))

	s.UpdateDaemonSet(name, func(ds *appsv1.DaemonSet) {
		ds.Spec.Template.Spec.Containers[0].Image = "agent:v1"
		ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType}
	})
	s.G.Eventually(func(g gomega.Gomega) {
		g.Expect(apimeta.IsStatusConditionTrue(s.Get(g, name).Status.Conditions, v1alpha1.StalledCondition)).To(gomega.BeTrue())
	}).Should(gomega.Succeed())

	r := run(s, "history", name)
	s.G.Expect(r.Code).To(gomega.BeZero(), r.Err)
	s.G.Expect(r.Out).To(gomega.MatchRegexp(`(?m)^1 +%s +pending +agent=agent:v1 `, names[0]))
	s.G.Expect(r.Out).To(gomega.MatchRegexp(`(?m)^2 +%s +active +agent=agent:v2 `, names[1]))

	expectOK(s, run(s, "diff", name), fmt.Sprintf(`--- active %s (revision 2)
+++ %s spec.template (not rolled out yet)
@@ -3,7 +3,7 @@
     app: agent
 spec:
   containers:
-  - image: agent:v2
+  - image: agent:v1
     imagePullPolicy: IfNotPresent
     name: agent
     resources: {}`, names[1], daemonSetRef(s)))
}
