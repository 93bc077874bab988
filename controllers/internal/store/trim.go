package store

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// The cache keeps of each node and pod what some reader of the
// controllers reads, and nothing else: at 100,000 nodes every byte kept per
// node is 100 kB of the manager's memory, twice (a node and its agent).
// What is kept, and who reads it, is listed on trimNode and trimPod; a
// reader of another field must add it there, and to
// TestTrimKeepsWhatTheControllersRead.
// The other pods the node health analysis judges are listed from the API
// server (APIReader), not from this cache, and are not trimmed.
//
// Trimmed objects are shared with the cache and, through intern, with one
// another: their strings, and a pod's labels, annotations, owner
// references and containers when another pod has the same. Every reader
// already reads them only; a writer copies first (DeepCopy copies all).

// trimNode keeps of a node:
//
//   - metadata.name, uid, resourceVersion and creationTimestamp: every
//     reader names the node; uid and resourceVersion name it as the related
//     object of an event (an invalid resource override).
//   - metadata.labels: template fit (node selector and affinity), the
//     canary's node selector, spread and zones, topology domains, the
//     settings' node selectors (overrides.Validate, ForNode),
//     NodePlacementChanged.
//   - metadata.annotations under resources.extendeddaemonset.io/ only: the
//     resource overrides (overrides.ForNode, CheckNodeAnnotations,
//     AnnotatedExtendedDaemonSets and the nodesByOverrides index,
//     ResourceOverridesChanged). No other node annotation is read.
//   - metadata.deletionTimestamp, spec.taints and spec.unschedulable:
//     placement.Maintenance, the template's fit (taints), canary.Eligible.
//   - status.conditions, their type, status, reason and
//     lastTransitionTime, of Ready and of those True:
//     placement.NodeReadiness reads Ready, placement.Maintenance the
//     lifecycle conditions when True, the node health analysis
//     (analysis.examineNode) a Ready not True or another condition True,
//     and quotes its reason. A condition neither Ready nor True (a kubelet's
//     four pressure conditions, most of the time) is read by none; nor is a
//     message or a heartbeat time.
//
// Nothing else of a node is read: not its owner references, finalizers,
// pod CIDRs or provider ID, nor any of its status but conditions
// (capacity, addresses, images, system info, volumes).
func trimNode(obj any) (any, error) {
	node, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	m := node.ObjectMeta
	node.ObjectMeta = metav1.ObjectMeta{
		Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion,
		CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp,
		Labels:      internLabels(m.Labels, m.Name),
		Annotations: resourceOverrides(m.Annotations),
	}
	node.Spec = corev1.NodeSpec{Taints: internTaints(node.Spec.Taints), Unschedulable: node.Spec.Unschedulable}
	node.Status = corev1.NodeStatus{Conditions: readNodeConditions(node.Status.Conditions)}
	return node, nil
}

// resourceOverrides are the resource override annotations of a node, nil
// when it has none.
func resourceOverrides(annotations map[string]string) map[string]string {
	var out map[string]string
	for k, v := range annotations {
		if strings.HasPrefix(k, v1alpha1.NodeResourcesAnnotationPrefix) {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// readNodeConditions are the conditions some reader reads (trimNode): Ready
// and those True, without message or heartbeat time.
func readNodeConditions(conditions []corev1.NodeCondition) []corev1.NodeCondition {
	var out []corev1.NodeCondition
	for _, c := range conditions {
		if c.Type != corev1.NodeReady && c.Status != corev1.ConditionTrue {
			continue
		}
		out = append(out, corev1.NodeCondition{
			Type: corev1.NodeConditionType(intern(string(c.Type))), Status: corev1.ConditionStatus(intern(string(c.Status))),
			Reason: intern(c.Reason), LastTransitionTime: c.LastTransitionTime,
		})
	}
	return out
}

func internTaints(taints []corev1.Taint) []corev1.Taint {
	for i := range taints {
		t := &taints[i]
		t.Key, t.Value, t.Effect = intern(t.Key), intern(t.Value), corev1.TaintEffect(intern(string(t.Effect)))
	}
	return taints
}

// trimPod keeps of a pod:
//
//   - metadata.name and namespace: every reader. uid: a deletion's
//     precondition, the expectations. resourceVersion: the precondition of
//     an in-place patch, the expectations. creationTimestamp: readiness
//     without a transition time (placement.ReadySince), a canary pod's age
//     (canary health), the pods a returning replica set takes back.
//     deletionTimestamp: terminating pods, everywhere.
//   - metadata.labels, all of them: the ExtendedDaemonSet's name (the
//     store's index), the replica set's (every reconciler, the watches);
//     an in-place patch adds keys to the pod's map, and would replace the
//     whole map if the cache showed none.
//   - metadata.annotations, all of them, for the same reason: the in-place
//     patch adds InPlaceUpdatedFromAnnotation, which imagesPending and
//     inPlaceReadySince read.
//   - metadata.ownerReferences: an in-place patch writes the whole list,
//     the new controller and the pod's other owners.
//   - spec.nodeName and, until the pod is bound (no nodeName),
//     spec.affinity.nodeAffinity's required terms: placement.TargetNode
//     (the pods' index by node, every reconciler), which reads the
//     affinity of a pod not bound only.
//   - spec.readinessGates: the in-place readiness gate (gated).
//   - spec.containers and initContainers, each one's name, image and
//     restart policy, all of them in order: an in-place patch replaces
//     images by position; imagesPending compares them with the statuses; a
//     restartable init container (a sidecar) counts as running.
//   - status.phase: failed pods, a canary's slow start, the in-place gate.
//   - status.startTime: when the new version reached a canary node
//     (canary node readiness, node health).
//   - status.conditions, each one's type, status, reason and
//     lastTransitionTime: Ready (readiness and since when, everywhere) and
//     PodScheduled when not True (placement.Unschedulable reads its
//     reason; True reads as absent). A pod with the in-place readiness gate
//     keeps them all, in order: ContainersReady and the gate's own are read
//     behind the gate only (gateClosed, closedForUpdate), and the gate's
//     patch replaces a condition by its position. No condition message is
//     read.
//   - status.containerStatuses and initContainerStatuses, all of them,
//     each one's name, image, ready, restartCount, state and
//     lastTerminationState: restarts and waiting reasons and messages
//     (canary health, the progress deadline's message, ContainerStateChanged),
//     running since (in place), terminations' reason and finish time
//     (canary health and its no-restart window). imageID only for a
//     container whose image is pinned by digest: that is when runs reads
//     it. A termination's message, a container's ID, its resources and
//     volume mounts are read by none.
//
// Nothing else of a pod is read: not its volumes, environment, probes,
// tolerations or other scheduling constraints, nor its IPs, QoS class,
// status reason or message.
func trimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	m := pod.ObjectMeta
	pod.ObjectMeta = metav1.ObjectMeta{
		Name: m.Name, Namespace: intern(m.Namespace), UID: m.UID, ResourceVersion: m.ResourceVersion,
		CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp,
		DeletionGracePeriodSeconds: m.DeletionGracePeriodSeconds,
		Labels:                     shareMap(m.Labels), Annotations: shareMap(m.Annotations),
		OwnerReferences: shareOwners(m.OwnerReferences),
	}
	pod.Spec = corev1.PodSpec{
		NodeName:       pod.Spec.NodeName,
		Affinity:       pinnedTo(pod.Spec.Affinity, pod.Spec.NodeName),
		ReadinessGates: shareGates(pod.Spec.ReadinessGates),
		Containers:     shareContainers(pod.Spec.Containers),
		InitContainers: shareContainers(pod.Spec.InitContainers),
	}
	s := pod.Status
	pod.Status = corev1.PodStatus{
		Phase: corev1.PodPhase(intern(string(s.Phase))), StartTime: s.StartTime,
		Conditions:            readPodConditions(s.Conditions, gated(pod.Spec.ReadinessGates)),
		ContainerStatuses:     readContainerStatuses(s.ContainerStatuses, pod.Spec.Containers),
		InitContainerStatuses: readContainerStatuses(s.InitContainerStatuses, pod.Spec.InitContainers),
	}
	return pod, nil
}

// pinnedTo keeps of the affinity of a pod not bound to a node yet the
// required node affinity that placement.TargetNode reads; the nodeName of
// a bound pod is all it reads.
func pinnedTo(affinity *corev1.Affinity, nodeName string) *corev1.Affinity {
	if nodeName != "" || affinity == nil || affinity.NodeAffinity == nil || affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	required := affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	for i := range required.NodeSelectorTerms {
		for _, reqs := range [][]corev1.NodeSelectorRequirement{required.NodeSelectorTerms[i].MatchFields, required.NodeSelectorTerms[i].MatchExpressions} {
			for j := range reqs {
				r := &reqs[j]
				r.Key, r.Operator = intern(r.Key), corev1.NodeSelectorOperator(intern(string(r.Operator)))
			}
		}
	}
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required}}
}

// readPodConditions are the conditions of a pod some reader reads
// (trimPod), without messages or probe times: of a pod gated for in-place
// updates all of them, in order; of another, Ready and PodScheduled when
// not True.
func readPodConditions(conditions []corev1.PodCondition, gated bool) []corev1.PodCondition {
	var out []corev1.PodCondition
	if gated && conditions != nil {
		out = make([]corev1.PodCondition, 0, len(conditions))
	}
	for _, c := range conditions {
		if !gated && c.Type != corev1.PodReady && (c.Type != corev1.PodScheduled || c.Status == corev1.ConditionTrue) {
			continue
		}
		out = append(out, corev1.PodCondition{
			Type: corev1.PodConditionType(intern(string(c.Type))), Status: corev1.ConditionStatus(intern(string(c.Status))),
			Reason: intern(c.Reason), LastTransitionTime: c.LastTransitionTime,
		})
	}
	return out
}

// gated says whether a pod with these readiness gates has the in-place
// readiness gate.
func gated(gates []corev1.PodReadinessGate) bool {
	for _, g := range gates {
		if g.ConditionType == v1alpha1.InPlaceUpdateReadyCondition {
			return true
		}
	}
	return false
}

// readContainerStatuses are the statuses of containers (trimPod); spec
// are the pod's containers of the same kind, whose images say whose
// imageID is read.
func readContainerStatuses(statuses []corev1.ContainerStatus, spec []corev1.Container) []corev1.ContainerStatus {
	if statuses == nil {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(statuses))
	for i, s := range statuses {
		out[i] = corev1.ContainerStatus{
			Name: intern(s.Name), Image: intern(s.Image), Ready: s.Ready, RestartCount: s.RestartCount,
			State: readState(s.State), LastTerminationState: readState(s.LastTerminationState),
		}
		if pinnedByDigest(spec, s.Name) {
			out[i].ImageID = intern(s.ImageID)
		}
	}
	return out
}

// pinnedByDigest says whether the container name of spec gives its image
// by digest (image@sha256:...).
func pinnedByDigest(spec []corev1.Container, name string) bool {
	for i := range spec {
		if spec[i].Name == name {
			return strings.Contains(spec[i].Image, "@")
		}
	}
	return false
}

// readState is a container state without a termination's message and
// container ID.
func readState(s corev1.ContainerState) corev1.ContainerState {
	if w := s.Waiting; w != nil {
		w.Reason = intern(w.Reason)
	}
	if t := s.Terminated; t != nil {
		s.Terminated = &corev1.ContainerStateTerminated{
			ExitCode: t.ExitCode, Signal: t.Signal, Reason: intern(t.Reason), StartedAt: t.StartedAt, FinishedAt: t.FinishedAt,
		}
	}
	return s
}
