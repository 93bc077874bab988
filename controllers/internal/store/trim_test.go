package store

import (
	"fmt"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// readNode is a node with every field some reader reads set, and more: a
// resource override, a maintenance taint and condition, a Ready condition
// gone False.
func readNode() *corev1.Node {
	node := kwokNode(7)
	at := metav1.NewTime(memoryNow.Add(-time.Minute))
	node.Annotations[v1alpha1.NodeResourcesAnnotationPrefix+"agents.agent.agent"] = `{"requests":{"cpu":"200m"}}`
	node.DeletionTimestamp = &at
	node.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Machine", Name: "m-7", UID: "m-7"}}
	node.Finalizers = []string{"example.com/cleanup"}
	node.Spec.Unschedulable = true
	node.Spec.Taints = []corev1.Taint{{Key: "karpenter.sh/disrupted", Effect: corev1.TaintEffectNoSchedule, TimeAdded: &at}}
	node.Spec.ProviderID = "kwok://node-7"
	node.Status.Conditions[0].Status, node.Status.Conditions[0].Reason = corev1.ConditionFalse, "KubeletNotReady"
	node.Status.Conditions = append(node.Status.Conditions, corev1.NodeCondition{
		Type: "DrainInProgress", Status: corev1.ConditionTrue, Reason: "Draining", Message: "draining", LastTransitionTime: at, LastHeartbeatTime: at,
	})
	return node
}

// readPod is an agent pod updated in place with every field some reader
// reads set, and more: an annotation, a sidecar, the in-place gate, a
// digest-pinned image, containers waiting and restarted.
func readPod() *corev1.Pod {
	pod := agentPod(7)
	at := metav1.NewTime(memoryNow.Add(-time.Minute))
	always := corev1.ContainerRestartPolicyAlways
	pod.Annotations = map[string]string{v1alpha1.InPlaceUpdatedFromAnnotation: "agent-1", "checksum/config": "abc"}
	pod.Finalizers = []string{"example.com/keep"}
	pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = &at, ptr.To[int64](30)
	pod.Spec.InitContainers = []corev1.Container{{Name: "sidecar", Image: "sidecar@sha256:abc", RestartPolicy: &always, Command: []string{"run"}}}
	pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: v1alpha1.InPlaceUpdateReadyCondition}}
	pod.Status.Reason, pod.Status.Message = "Evicted", "the node was low on memory"
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
		Type: v1alpha1.InPlaceUpdateReadyCondition, Status: corev1.ConditionFalse, Reason: "InPlaceUpdate", Message: "updating", LastTransitionTime: at,
	})
	pod.Status.Conditions[4] = corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/1 nodes are available", LastTransitionTime: at}
	pod.Status.ContainerStatuses[0].RestartCount = 3
	pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s"}}
	pod.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: 137, Reason: "OOMKilled", Message: "out of memory", StartedAt: at, FinishedAt: at, ContainerID: "containerd://1"}}
	pod.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "sidecar", Image: "sidecar:v1", ImageID: "sidecar@sha256:abc", Ready: true,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}}}}
	return pod
}

// The trimmed node and pod keep every field a reader reads (trimNode,
// trimPod), and drop the others.
func TestTrimKeepsWhatTheControllersRead(t *testing.T) {
	node, pod := readNode(), readPod()
	obj, err := trimNode(node.DeepCopy())
	gomega.NewWithT(t).Expect(err).NotTo(gomega.HaveOccurred())
	n := obj.(*corev1.Node)
	obj, err = trimPod(pod.DeepCopy())
	gomega.NewWithT(t).Expect(err).NotTo(gomega.HaveOccurred())
	p := obj.(*corev1.Pod)
	unbound := pod.DeepCopy()
	unbound.Spec.NodeName = ""
	unbound.Spec.Affinity.PodAntiAffinity = &corev1.PodAntiAffinity{}
	obj, err = trimPod(unbound)
	gomega.NewWithT(t).Expect(err).NotTo(gomega.HaveOccurred())
	pending := obj.(*corev1.Pod)
	ungated := pod.DeepCopy()
	ungated.Spec.ReadinessGates = nil
	obj, err = trimPod(ungated)
	gomega.NewWithT(t).Expect(err).NotTo(gomega.HaveOccurred())
	plain := obj.(*corev1.Pod)
	ready, drain := node.Status.Conditions[0], node.Status.Conditions[5]
	withoutMessage := func(c corev1.NodeCondition) corev1.NodeCondition {
		return corev1.NodeCondition{Type: c.Type, Status: c.Status, Reason: c.Reason, LastTransitionTime: c.LastTransitionTime}
	}
	lastTerminated := *pod.Status.ContainerStatuses[0].LastTerminationState.Terminated
	lastTerminated.Message, lastTerminated.ContainerID = "", ""
	podCondition := func(c corev1.PodCondition) corev1.PodCondition {
		return corev1.PodCondition{Type: c.Type, Status: c.Status, Reason: c.Reason, LastTransitionTime: c.LastTransitionTime}
	}
	var conditions []corev1.PodCondition
	for _, c := range pod.Status.Conditions {
		conditions = append(conditions, podCondition(c))
	}
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"node name", n.Name, node.Name},
		{"node uid", n.UID, node.UID},
		{"node resourceVersion", n.ResourceVersion, node.ResourceVersion},
		{"node labels", n.Labels, node.Labels},
		{"node resource override annotations only", n.Annotations, map[string]string{
			v1alpha1.NodeResourcesAnnotationPrefix + "agents.agent.agent": `{"requests":{"cpu":"200m"}}`}},
		{"node deletionTimestamp", n.DeletionTimestamp, node.DeletionTimestamp},
		{"node owner references", n.OwnerReferences, []metav1.OwnerReference(nil)},
		{"node finalizers", n.Finalizers, []string(nil)},
		{"node taints", n.Spec.Taints, node.Spec.Taints},
		{"node unschedulable", n.Spec.Unschedulable, true},
		{"node spec but taints and unschedulable", n.Spec, corev1.NodeSpec{Taints: node.Spec.Taints, Unschedulable: true}},
		{"node conditions Ready and True, without message or heartbeat", n.Status.Conditions,
			[]corev1.NodeCondition{withoutMessage(ready), withoutMessage(drain)}},
		{"node status but conditions", n.Status, corev1.NodeStatus{Conditions: n.Status.Conditions}},

		{"pod name", p.Name, pod.Name},
		{"pod namespace", p.Namespace, pod.Namespace},
		{"pod uid", p.UID, pod.UID},
		{"pod resourceVersion", p.ResourceVersion, pod.ResourceVersion},
		{"pod creationTimestamp", p.CreationTimestamp, pod.CreationTimestamp},
		{"pod deletionTimestamp", p.DeletionTimestamp, pod.DeletionTimestamp},
		{"pod labels", p.Labels, pod.Labels},
		{"pod annotations", p.Annotations, pod.Annotations},
		{"pod owner references", p.OwnerReferences, pod.OwnerReferences},
		{"pod generateName", p.GenerateName, ""},
		{"pod finalizers", p.Finalizers, []string(nil)},
		{"pod managed fields", p.ManagedFields, []metav1.ManagedFieldsEntry(nil)},
		{"pod nodeName", p.Spec.NodeName, pod.Spec.NodeName},
		{"pod affinity once bound", p.Spec.Affinity, (*corev1.Affinity)(nil)},
		{"pod required node affinity only, until bound", pending.Spec.Affinity, &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution}}},
		{"pod pinned to its node until bound", placement.TargetNode(pending), pod.Spec.NodeName},
		{"pod readiness gates", p.Spec.ReadinessGates, pod.Spec.ReadinessGates},
		{"pod containers' names and images", p.Spec.Containers, []corev1.Container{{Name: "agent", Image: pod.Spec.Containers[0].Image}}},
		{"pod sidecar's restart policy", p.Spec.InitContainers, []corev1.Container{{Name: "sidecar", Image: "sidecar@sha256:abc",
			RestartPolicy: pod.Spec.InitContainers[0].RestartPolicy}}},
		{"pod volumes", p.Spec.Volumes, []corev1.Volume(nil)},
		{"pod tolerations", p.Spec.Tolerations, []corev1.Toleration(nil)},
		{"pod phase", p.Status.Phase, corev1.PodRunning},
		{"pod startTime", p.Status.StartTime, pod.Status.StartTime},
		{"gated pod's conditions, all in order, without messages", p.Status.Conditions, conditions},
		{"other pod's conditions, Ready and PodScheduled not True", plain.Status.Conditions, []corev1.PodCondition{conditions[2], conditions[4]}},
		{"pod status reason and message", p.Status.Reason + p.Status.Message, ""},
		{"pod IPs and QoS class", p.Status.PodIP + p.Status.HostIP + string(p.Status.QOSClass), ""},
		{"container name and image", p.Status.ContainerStatuses[0].Name + " " + p.Status.ContainerStatuses[0].Image, "agent " + pod.Status.ContainerStatuses[0].Image},
		{"container ready", p.Status.ContainerStatuses[0].Ready, true},
		{"container restarts", p.Status.ContainerStatuses[0].RestartCount, int32(3)},
		{"container waiting reason and message", p.Status.ContainerStatuses[0].State, pod.Status.ContainerStatuses[0].State},
		{"container last termination without message or ID", p.Status.ContainerStatuses[0].LastTerminationState.Terminated, &lastTerminated},
		{"container imageID of an image not pinned", p.Status.ContainerStatuses[0].ImageID, ""},
		{"container ID", p.Status.ContainerStatuses[0].ContainerID, ""},
		{"container started", p.Status.ContainerStatuses[0].Started, (*bool)(nil)},
		{"sidecar imageID of an image pinned by digest", p.Status.InitContainerStatuses[0].ImageID, "sidecar@sha256:abc"},
		{"sidecar running since", p.Status.InitContainerStatuses[0].State, pod.Status.InitContainerStatuses[0].State},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gomega.NewWithT(t).Expect(tc.got).To(gomega.Equal(tc.want))
		})
	}
}

// Objects trimmed alike share their repeated values, and other kinds pass
// through untouched.
func TestTrimSharesRepeatedValues(t *testing.T) {
	g := gomega.NewWithT(t)
	trimmed := func(pod *corev1.Pod) *corev1.Pod {
		obj, err := trimPod(pod)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		return obj.(*corev1.Pod)
	}
	a, b := trimmed(agentPod(1)), trimmed(agentPod(2))
	g.Expect(reflect.ValueOf(a.Labels).UnsafePointer()).To(gomega.Equal(reflect.ValueOf(b.Labels).UnsafePointer()),
		"one label map for the pods of a replica set")
	g.Expect(&a.OwnerReferences[0]).To(gomega.BeIdenticalTo(&b.OwnerReferences[0]))
	g.Expect(&a.Spec.Containers[0]).To(gomega.BeIdenticalTo(&b.Spec.Containers[0]))
	g.Expect(unsafe.StringData(a.Namespace)).To(gomega.Equal(unsafe.StringData(b.Namespace)), "one copy of a repeated string")

	other := agentPod(3)
	other.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel] = "agent-3"
	g.Expect(trimmed(other).Labels).To(gomega.HaveKeyWithValue(v1alpha1.ExtendedDaemonSetReplicaSetNameLabel, "agent-3"),
		"a pod of another replica set keeps its own labels")
	g.Expect(a.Labels).To(gomega.HaveKeyWithValue(v1alpha1.ExtendedDaemonSetReplicaSetNameLabel, "agent-2"))

	obj, err := trimNode(kwokNode(4))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	node := obj.(*corev1.Node)
	g.Expect(unsafe.StringData(node.Labels[corev1.LabelHostname])).To(gomega.Equal(unsafe.StringData(node.Name)),
		"the hostname label shares the node's name")

	g.Expect(trimNode(a)).To(gomega.BeIdenticalTo(a), "other kinds pass through")
	g.Expect(trimPod(node)).To(gomega.BeIdenticalTo(node), "other kinds pass through")
}

// A table keeps what keeps being asked for, within its bound, and forgets
// what one object alone had.
func TestTableIsBounded(t *testing.T) {
	g := gomega.NewWithT(t)
	var tbl table[string]
	built := map[string]int{}
	get := func(s string) string { return tbl.get(s, func() string { built[s]++; return s }) }
	for i := range 3 * interned {
		get(fmt.Sprintf("instance-%d", i))
		if i%(interned/2) == 0 {
			get("agents")
		}
		g.Expect(len(tbl.newer)).To(gomega.BeNumerically("<=", interned))
		g.Expect(len(tbl.older)).To(gomega.BeNumerically("<=", interned))
	}
	get("agents")
	g.Expect(built["agents"]).To(gomega.Equal(1), "a value asked for in every generation stays")
	get("instance-0")
	g.Expect(built["instance-0"]).To(gomega.Equal(2), "a value asked for once is forgotten")
}
