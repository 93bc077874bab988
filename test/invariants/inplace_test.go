package invariants

import (
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// withImage gives a pod one container running image, as its status says.
func withImage(pod *corev1.Pod, image string) {
	pod.Spec.Containers = []corev1.Container{{Name: "agent", Image: image}}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "agent", Image: image, Ready: true}}
}

// patchImage updates the first pod on node in place: new image and
// replica set, the status not yet caught up, Ready still True.
func (f *fleet) patchImage(node, image, replicaSet string) {
	pod := f.pods[node][0]
	pod.Spec.Containers[0].Image = image
	pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel] = replicaSet
	f.c.Pod(pod.DeepCopy(), false, f.step())
}

// restart has the kubelet run the first pod on node on its spec's image.
func (f *fleet) restart(node string) {
	pod := f.pods[node][0]
	pod.Status.ContainerStatuses[0].Image = pod.Spec.Containers[0].Image
	f.c.Pod(pod.DeepCopy(), false, f.step())
}

func newImageFleet(t *testing.T, nodes int, maxUnavailable int32) *fleet {
	f := newFleet(t, nodes, intstr.FromInt32(maxUnavailable), intstr.FromInt32(0))
	for _, pods := range f.pods {
		withImage(pods[0], "agent:1")
		f.c.Pod(pods[0].DeepCopy(), false, f.step())
	}
	return f
}

func TestAPodRunningAnOldImageIsUnavailable(t *testing.T) {
	g := gomega.NewWithT(t)
	pod := &corev1.Pod{}
	setReady(pod, true)
	withImage(pod, "agent:1")
	g.Expect(RunningAndReady(pod)).To(gomega.BeTrue())
	pod.Spec.Containers[0].Image = "agent:2"
	g.Expect(RunningAndReady(pod)).To(gomega.BeFalse(), "Ready, but the container still runs agent:1")
}

func TestInPlaceUpdatesSpendTheBudget(t *testing.T) {
	g := gomega.NewWithT(t)
	f := newImageFleet(t, 4, 1)
	f.patchImage("node-0", "agent:2", "v2")
	g.Expect(f.settle()).To(gomega.BeEmpty(), "one node updating is the budget")
	f.restart("node-0")
	f.patchImage("node-1", "agent:2", "v2")
	g.Expect(f.settle()).To(gomega.BeEmpty(), "node-0 came back first")
	f.patchImage("node-2", "agent:2", "v2")
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{Unavailable}), "node-1 still runs agent:1")
	g.Expect(f.c.PodsCreated()).To(gomega.BeEmpty())
}

func TestAClosedInPlaceGateIsTheRollouts(t *testing.T) {
	g := gomega.NewWithT(t)
	f := newImageFleet(t, 3, 1)
	f.fail("node-0")
	g.Expect(f.settle()).To(gomega.BeEmpty(), "an agent failing alone is not the rollout's")
	pod := f.pods["node-1"][0]
	setReady(pod, false)
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: v1alpha1.InPlaceUpdateReadyCondition, Status: corev1.ConditionFalse})
	f.c.Pod(pod.DeepCopy(), false, f.step())
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{Unavailable}),
		"an agent taken out of service for an update while another failed, maxUnavailable 1")
}
