package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/invariants"
)

// migrationReaction is what the controller may take, beyond deleting an
// old pod and starting a new one, to notice that a DaemonSet pod is gone:
// no watch covers those pods, it polls them every 2 s, and a busy machine
// delays any reaction.
const migrationReaction = 5 * time.Second

// An ExtendedDaemonSet naming the DaemonSet it replaces, with the native
// DaemonSet controller running: while the DaemonSet manages its pods they
// hold their nodes (no second agent, none deleted); once it is deleted with
// --cascade=orphan, its pods are replaced under maxUnavailable, no node goes
// without a Ready agent pod for longer than it takes to delete one pod and
// start another, and the ExtendedDaemonSet ends rolled out. Its selector is
// unset, which means its template labels: a bare pod of another
// application in the namespace is no orphan of the DaemonSet, and stays.
func TestMigrationFromNativeDaemonSet(t *testing.T) {
	s := newScenario(t)
	const group = "migration"
	nodes := []string{"e2e-migration-0", "e2e-migration-1", "e2e-migration-2", "e2e-migration-3", "e2e-migration-4", "e2e-migration-5"}
	s.addNodeGroup(group, nodes...)

	// Same pod labels as the ExtendedDaemonSet's, as a Service selecting
	// the agent needs: the DaemonSet is told apart by owner, not by label.
	eds := agentEDS(s.ns, "agent", "v2")
	eds.Spec.Selector = nil
	eds.Spec.Template.Spec.NodeSelector = onGroup(group)
	legacy := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy-agent", Namespace: s.ns},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: eds.Spec.Template.Labels},
			Template: *eds.Spec.Template.DeepCopy(),
		},
	}
	database := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "database", Namespace: s.ns, Labels: map[string]string{"app": "database"}},
		Spec:       corev1.PodSpec{NodeName: nodes[0], Containers: []corev1.Container{{Name: "db", Image: "registry.example/database:1"}}},
	}
	s.g.Expect(env.Client.Create(s.ctx, database)).To(gomega.Succeed())
	// Registered after the scenario's cleanup, so it runs first: the
	// scenario waits for the namespace to have no pod left.
	t.Cleanup(func() {
		err := env.Client.Delete(context.Background(), database, client.GracePeriodSeconds(0))
		s.g.Expect(client.IgnoreNotFound(err)).To(gomega.Succeed())
	})
	legacy.Spec.Template.Spec.Containers[0].Image = agentImage("v1")
	s.g.Expect(env.Client.Create(s.ctx, legacy)).To(gomega.Succeed())
	agents := labels.SelectorFromSet(eds.Spec.Template.Labels).String()
	var legacyPods []corev1.Pod
	s.g.Eventually(func(g gomega.Gomega) {
		legacyPods = s.daemonSetPods(g, legacy)
		var placed []string
		for _, pod := range legacyPods {
			g.Expect(invariants.RunningAndReady(&pod)).To(gomega.BeTrue(), "pod %s on %s is not Running and Ready", pod.Name, pod.Spec.NodeName)
			placed = append(placed, pod.Spec.NodeName)
		}
		g.Expect(placed).To(gomega.ConsistOf(nodes))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())

	pods, statuses := s.startWatching(eds, agents, nodes)
	maxUnavailable := intstr.FromString("25%")
	allowed, err := intstr.GetScaledValueFromIntOrPercent(&maxUnavailable, len(nodes), true)
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = &maxUnavailable
	annotate(eds, v1alpha1.OldDaemonSetAnnotation, legacy.Name)
	s.create(eds)

	// The DaemonSet would recreate any pod deleted: the migration waits and
	// says how to go on.
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		reconciling := apimeta.FindStatusCondition(latest.Status.Conditions, v1alpha1.ReconcilingCondition)
		g.Expect(reconciling).NotTo(gomega.BeNil())
		g.Expect(reconciling.Reason).To(gomega.Equal(v1alpha1.ReasonWaitingForOldDaemonSet))
		g.Expect(reconciling.Message).To(gomega.ContainSubstring("--cascade=orphan"))
		g.Expect(kstatusOf(g, latest).Status).To(gomega.Equal(status.InProgressStatus))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	s.g.Consistently(func(g gomega.Gomega) {
		g.Expect(podUIDs(s.daemonSetPods(g, legacy))).To(gomega.Equal(podUIDs(legacyPods)), "a DaemonSet pod was replaced while its DaemonSet manages it")
		g.Expect(pods.Counts().Created).To(gomega.BeEmpty(), "pods created beside the DaemonSet's")
	}).WithTimeout(holdWindow).WithPolling(pollInterval).Should(gomega.Succeed())

	s.g.Expect(env.Client.Delete(s.ctx, legacy, client.PropagationPolicy(metav1.DeletePropagationOrphan))).To(gomega.Succeed())
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(podNames(s.orphansOf(g, eds))).To(gomega.BeEmpty(), "pods of the former DaemonSet left")
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	s.expectRolledOut(eds, "v2", nodes)

	seen := s.stopWatching(pods, statuses)
	s.g.Expect(seen.Created).To(gomega.Equal(map[string]int{"ExtendedDaemonSetReplicaSet": len(nodes)}), "pods created by kind of owner")
	s.g.Expect(seen.MaxUnavailable).To(gomega.BeNumerically("<=", allowed), "nodes without a Ready pod at once")
	s.g.Expect(seen.MaxUnavailable).To(gomega.BeNumerically(">=", 1), "the watcher saw no pod replaced")
	s.g.Expect(seen.MaxPerNode).To(gomega.Equal(1), "non-terminating pods on one node")
	s.g.Expect(seen.LongestGap).To(gomega.BeNumerically("<=", seen.SlowestDeletion+seen.SlowestStart+migrationReaction),
		"node %s went without a Ready pod for longer than a pod deletion (%s) and start (%s) take", seen.GapNode, seen.SlowestDeletion, seen.SlowestStart)
	s.expectEvent(eds, "RolledOut")
	live := &corev1.Pod{}
	s.g.Expect(env.Client.Get(s.ctx, client.ObjectKeyFromObject(database), live)).To(gomega.Succeed(), "the database pod was deleted")
	s.g.Expect(live.UID).To(gomega.Equal(database.UID), "the database pod was replaced")
	s.g.Expect(live.DeletionTimestamp).To(gomega.BeNil(), "the database pod was taken for an old agent")
}

// orphansOf lists the live pods with eds's template labels that no
// controller owns: a DaemonSet's pods once it was deleted with
// --cascade=orphan.
func (s *scenario) orphansOf(g gomega.Gomega, eds *v1alpha1.ExtendedDaemonSet) []corev1.Pod {
	return s.podsWhere(g, eds.Namespace, eds.Spec.Template.Labels, func(pod *corev1.Pod) bool {
		return metav1.GetControllerOf(pod) == nil && pod.DeletionTimestamp == nil
	})
}

func podUIDs(pods []corev1.Pod) []string {
	uids := make([]string, 0, len(pods))
	for _, p := range pods {
		uids = append(uids, string(p.UID))
	}
	slices.Sort(uids)
	return uids
}

// daemonSetPods lists the pods ds controls.
func (s *scenario) daemonSetPods(g gomega.Gomega, ds *appsv1.DaemonSet) []corev1.Pod {
	return s.podsWhere(g, ds.Namespace, ds.Spec.Selector.MatchLabels, func(pod *corev1.Pod) bool {
		ref := metav1.GetControllerOf(pod)
		return ref != nil && ref.UID == ds.UID
	})
}

// podsWhere lists the pods of namespace with labels that keep accepts.
func (s *scenario) podsWhere(g gomega.Gomega, namespace string, labels map[string]string, keep func(*corev1.Pod) bool) []corev1.Pod {
	var list corev1.PodList
	g.Expect(env.Client.List(s.ctx, &list, client.InNamespace(namespace), client.MatchingLabels(labels))).To(gomega.Succeed())
	var kept []corev1.Pod
	for i := range list.Items {
		if keep(&list.Items[i]) {
			kept = append(kept, list.Items[i])
		}
	}
	return kept
}
