package invariants

import (
	"fmt"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// The pods of a DaemonSet an ExtendedDaemonSet's workloadRef names carry
// none of our labels: the checker takes them for the ExtendedDaemonSet's,
// on the nodes the DaemonSet's template fits, and holds the budget over
// them as over pods of its own.
func TestDaemonSetPodsOfAWorkloadRefAreJudged(t *testing.T) {
	g := gomega.NewWithT(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewChecker(ControllerFieldManager)
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", UID: "ds-uid"}}
	ds.Spec.Template.Spec.NodeSelector = map[string]string{"pool": "agents"}
	c.DaemonSet(ds, false, now)
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Generation: 1}}
	eds.Spec.WorkloadRef = &v1alpha1.WorkloadRef{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent"}
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
	eds.Status.ActiveReplicaSet, eds.Status.ObservedGeneration = "agent-h1", 1
	eds.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ReadyCondition, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonRolledOut}}
	c.ExtendedDaemonSet(eds, false, now)
	pods := map[string]*corev1.Pod{}
	for i := range 4 {
		node := readyNode(fmt.Sprintf("node-%d", i))
		node.Labels = map[string]string{"pool": "agents"}
		c.Node(node, false, now)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("agent-%d", i), UID: types.UID(fmt.Sprint(i)),
				Labels:          map[string]string{appsv1.DefaultDaemonSetUniqueLabelKey: "h1"},
				OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Name: "agent", UID: "ds-uid", Controller: ptr.To(true)}},
			},
			Spec: corev1.PodSpec{NodeName: node.Name},
		}
		setReady(pod, true)
		pods[node.Name] = pod
		c.Pod(pod.DeepCopy(), false, now)
	}
	// A node the DaemonSet's template does not fit wants no agent.
	c.Node(readyNode("node-other"), false, now)
	c.Synced()
	g.Expect(c.sets["agent"].desired).To(gomega.HaveLen(4))
	g.Expect(c.pods[types.UID("0")].replicaSet).To(gomega.Equal("agent-h1"))

	remove := func(node string) {
		pod := pods[node]
		pod.DeletionTimestamp = ptr.To(metav1.NewTime(now))
		now = now.Add(time.Second)
		c.Pod(pod.DeepCopy(), false, now)
		now = now.Add(time.Second)
		c.Pod(pod.DeepCopy(), true, now)
	}
	settle := func() []Violation {
		for range 3 {
			now = now.Add(time.Second)
			c.Tick(now)
		}
		return c.Violations()
	}
	remove("node-0")
	g.Expect(settle()).To(gomega.BeEmpty(), "one node down is the budget")
	remove("node-1")
	g.Expect(rules(settle())).To(gomega.Equal([]Rule{Unavailable}))
}
