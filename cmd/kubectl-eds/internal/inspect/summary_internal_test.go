package inspect

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// The summary counts canary nodes, not pods: a second canary pod on a
// node (a duplicate the controller is deleting) is not a node more.
func TestSummaryCountsCanaryNodes(t *testing.T) {
	g := gomega.NewWithT(t)
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns"}}
	eds.Status = v1alpha1.ExtendedDaemonSetStatus{
		State: v1alpha1.StateCanary, Reason: v1alpha1.ReasonCanaryRunning, ActiveReplicaSet: "agent-a",
		Desired: 3, Current: 3, Ready: 3, Available: 3, UpToDate: 1,
		Canary: &v1alpha1.CanaryStatus{ReplicaSet: "agent-b", Nodes: []string{"node-1", "node-2"}},
	}
	pod := func(name, node string, restarts int32) cli.Pod {
		return cli.Pod{ReplicaSet: "agent-b", Pod: &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
			Spec:       corev1.PodSpec{NodeName: node},
			Status: corev1.PodStatus{
				Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "agent", Ready: true, RestartCount: restarts}},
			},
		}}
	}
	s := &snapshot{eds: eds, now: time.Now(), pods: []cli.Pod{pod("b-1", "node-1", 1), pod("b-1-dup", "node-1", 0)}}
	g.Expect(summary(s)).To(gomega.HaveSuffix("; canary agent-b: 1/2 ready, 1 restarts"))
}
