package store

// The memory model of the cache: what the informers hold per node and per
// pod once the transforms of CacheOptions have trimmed them, measured on
// heap after garbage collection. These benchmarks need no API server: run
// them with -short.

import (
	"encoding/json"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// memoryObjects is how many objects a measurement builds: enough that the
// heap's own noise (a few hundred kilobytes) is under 1% of the figure.
const memoryObjects = 10000

// memoryNow is when the objects were last updated.
var memoryNow = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// managedFields are the entries the API server keeps of two writers, as
// it does for every node and pod: its creator and its kubelet (kwok).
func managedFields(creator string) []metav1.ManagedFieldsEntry {
	spec := `{"f:metadata":{"f:labels":{".":{},"f:kubernetes.io/hostname":{},"f:kubernetes.io/os":{},"f:type":{}}},` +
		`"f:spec":{"f:affinity":{".":{},"f:nodeAffinity":{".":{},"f:requiredDuringSchedulingIgnoredDuringExecution":{}}},` +
		`"f:containers":{"k:{\"name\":\"agent\"}":{".":{},"f:env":{},"f:image":{},"f:name":{},"f:resources":{}}}}}`
	status := `{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:lastHeartbeatTime":{},"f:lastTransitionTime":{},` +
		`"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}},"f:phase":{},"f:startTime":{}}}`
	at := metav1.NewTime(memoryNow)
	return []metav1.ManagedFieldsEntry{
		{Manager: creator, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &at,
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(spec)},
		{Manager: "kwok", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &at,
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(status), Subresource: "status"},
	}
}

// kwokNode is node i as the API server sends a node kwok keeps Ready: the
// labels and annotations of the simulated cluster's nodes, its capacity,
// addresses, system info and the five conditions of a kubelet.
func kwokNode(i int) *corev1.Node {
	name := fmt.Sprintf("node-%06d", i)
	resources := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods: resource.MustParse("110"),
	}
	at := metav1.NewTime(memoryNow)
	condition := func(kind corev1.NodeConditionType, status corev1.ConditionStatus, reason, message string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: kind, Status: status, Reason: reason, Message: message, LastHeartbeatTime: at, LastTransitionTime: at}
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, UID: types.UID(fmt.Sprintf("0f1e2d3c-4b5a-6978-%04x-%012x", i%0xffff, i)),
			ResourceVersion: fmt.Sprint(1000000 + i), CreationTimestamp: at,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels: map[string]string{
				corev1.LabelHostname: name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64", "type": "kwok",
				corev1.LabelTopologyZone: fmt.Sprintf("zone-%d", i%3),
			},
			ManagedFields: managedFields("kube-controller-manager"),
		},
		Spec: corev1.NodeSpec{PodCIDR: fmt.Sprintf("10.%d.%d.0/24", i/256%256, i%256)},
		Status: corev1.NodeStatus{
			Capacity: resources, Allocatable: resources.DeepCopy(), Phase: corev1.NodeRunning,
			Conditions: []corev1.NodeCondition{
				condition(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
				condition(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
				condition(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
				condition(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
				condition(corev1.NodeNetworkUnavailable, corev1.ConditionFalse, "RouteCreated", "RouteController created a route"),
			},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.0.%d.%d", i/256%256, i%256)},
				{Type: corev1.NodeHostName, Address: name},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{
				MachineID: fmt.Sprintf("%032x", i), SystemUUID: fmt.Sprintf("%032x", i), BootID: fmt.Sprintf("%032x", i),
				KernelVersion: "6.1.0", OSImage: "kwok", ContainerRuntimeVersion: "kwok-v0.7.0",
				KubeletVersion: "fake", OperatingSystem: "linux", Architecture: "amd64",
			},
		},
	}
}

// agentPod is the pod of a node agent on node i as the API server sends it
// once Running and Ready: created by the controller from a template with
// the environment, probes, resources and volumes of a real agent, the
// service account volume and the DaemonSet tolerations admission and the
// controller add, and the status the kubelet writes.
func agentPod(i int) *corev1.Pod {
	node := fmt.Sprintf("node-%06d", i)
	at := metav1.NewTime(memoryNow)
	env := make([]corev1.EnvVar, 0, 12)
	for j := range 10 {
		env = append(env, corev1.EnvVar{Name: fmt.Sprintf("AGENT_SETTING_%d", j), Value: fmt.Sprintf("value-%d", j)})
	}
	env = append(env, corev1.EnvVar{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}})
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromInt32(5555)}},
		PeriodSeconds: 10, TimeoutSeconds: 5, FailureThreshold: 3, SuccessThreshold: 1}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "agent-2-" + node, Namespace: "agents", GenerateName: "agent-2-",
			UID:             types.UID(fmt.Sprintf("a1b2c3d4-e5f6-0718-%04x-%012x", i%0xffff, i)),
			ResourceVersion: fmt.Sprint(2000000 + i), CreationTimestamp: at,
			Labels: map[string]string{"app": "agent", v1alpha1.ExtendedDaemonSetNameLabel: "agent",
				v1alpha1.ExtendedDaemonSetReplicaSetNameLabel: "agent-2"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ExtendedDaemonSetReplicaSet",
				Name: "agent-2", UID: "5e6f7a8b-9c0d-1e2f-3a4b-5c6d7e8f9a0b", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
			ManagedFields: managedFields("extendeddaemonset"),
		},
		Spec: corev1.PodSpec{
			NodeName: node, ServiceAccountName: "agent", SchedulerName: corev1.DefaultSchedulerName,
			RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst, TerminationGracePeriodSeconds: ptr.To[int64](30),
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
					Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}}},
			Tolerations: []corev1.Toleration{
				{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
				{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
				{Key: corev1.TaintNodeDiskPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
				{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
				{Key: corev1.TaintNodePIDPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
				{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
			},
			Containers: []corev1.Container{{
				Name: "agent", Image: "registry.example.com/agents/agent:v2.31.0", Env: env,
				Ports: []corev1.ContainerPort{{Name: "health", ContainerPort: 5555, Protocol: corev1.ProtocolTCP}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
				},
				LivenessProbe: probe, ReadinessProbe: probe.DeepCopy(),
				VolumeMounts: []corev1.VolumeMount{{Name: "proc", MountPath: "/host/proc", ReadOnly: true},
					{Name: "cgroups", MountPath: "/host/sys/fs/cgroup", ReadOnly: true},
					{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
				TerminationMessagePath: corev1.TerminationMessagePathDefault, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy: corev1.PullIfNotPresent,
			}},
			Volumes: []corev1.Volume{
				{Name: "proc", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/proc"}}},
				{Name: "cgroups", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/sys/fs/cgroup"}}},
				{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
						Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
				}}}},
			},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, QOSClass: corev1.PodQOSBurstable, StartTime: &at,
			HostIP: fmt.Sprintf("10.0.%d.%d", i/256%256, i%256), PodIP: fmt.Sprintf("10.1.%d.%d", i/256%256, i%256),
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: at},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: at},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: at},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at},
			},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "agent", Image: "registry.example.com/agents/agent:v2.31.0", Ready: true, Started: ptr.To(true),
				ImageID:     "registry.example.com/agents/agent@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
				ContainerID: fmt.Sprintf("containerd://%064x", i),
				State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}},
			}},
		},
	}
}

// cacheIndexers are the indexes of the informer of obj's kind in the
// manager's cache: the namespace index controller-runtime adds to every
// informer, the field indexes SetupIndexes registers, and the store's own.
func cacheIndexers(obj any) toolscache.Indexers {
	ix := toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc}
	switch obj.(type) {
	case *corev1.Pod:
		ix[podsByExtendedDaemonSet] = extendedDaemonSetOfPod
		ix[podsByNodeName] = nodeOfPod
	case *corev1.Node:
		ix["field:"+nodesByOverrides.Field] = fieldIndexFunc(nodesByOverrides)
	}
	return ix
}

// fieldIndexFunc indexes as controller-runtime's IndexField does: each
// value once for all namespaces and once for the object's own.
func fieldIndexFunc(fi FieldIndex) toolscache.IndexFunc {
	return func(obj any) ([]string, error) {
		o, ok := obj.(client.Object)
		if !ok {
			return nil, nil
		}
		var keys []string
		for _, v := range fi.Extract(o) {
			keys = append(keys, "__all_namespaces/"+v)
			if ns := o.GetNamespace(); ns != "" {
				keys = append(keys, ns+"/"+v)
			}
		}
		return keys, nil
	}
}

// cachedBytes is the heap that count objects made by build hold once each
// has come the informer's way: encoded as the API server sends it,
// decoded into a new object, transformed, and added to an indexer with
// indexers. Per object, the index entries and the store's key are
// included; what decoding and trimming dropped is collected first.
func cachedBytes[T any](count int, build func(i int) *T, transform toolscache.TransformFunc, indexers toolscache.Indexers) (uint64, error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	indexer := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, indexers)
	for i := range count {
		wire, err := json.Marshal(build(i))
		if err != nil {
			return 0, fmt.Errorf("encoding object %d: %w", i, err)
		}
		obj := new(T)
		if err := json.Unmarshal(wire, obj); err != nil {
			return 0, fmt.Errorf("decoding object %d: %w", i, err)
		}
		kept, err := transform(obj)
		if err != nil {
			return 0, fmt.Errorf("transforming object %d: %w", i, err)
		}
		if err := indexer.Add(kept); err != nil {
			return 0, fmt.Errorf("caching object %d: %w", i, err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if got := len(indexer.ListKeys()); got != count {
		return 0, fmt.Errorf("the cache holds %d objects, want %d", got, count)
	}
	runtime.KeepAlive(indexer)
	return after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc), nil
}

// untrimmed is the cache without this package's transforms: the objects
// as the API server sends them.
func untrimmed(obj any) (any, error) { return obj, nil }

// BenchmarkCacheMemory is the memory model of the cache: the heap bytes
// per node and per pod the informers hold, trimmed as CacheOptions trims
// them and indexed as the manager indexes them (B/object); beside it, the
// same objects without the indexes (the objects' own share), kept whole
// (what the trimming saves), and what each index alone adds
// (index:<name>). Each iteration builds a cache of memoryObjects objects;
// the figure is their mean, ns/op the time to build them.
func BenchmarkCacheMemory(b *testing.B) {
	type measure func(transform toolscache.TransformFunc, indexers toolscache.Indexers) (uint64, error)
	for _, bc := range []struct {
		name     string
		measure  measure
		trim     toolscache.TransformFunc
		indexers toolscache.Indexers
	}{
		{"node", func(t toolscache.TransformFunc, ix toolscache.Indexers) (uint64, error) {
			return cachedBytes(memoryObjects, kwokNode, t, ix)
		}, trimNode, cacheIndexers(&corev1.Node{})},
		{"pod", func(t toolscache.TransformFunc, ix toolscache.Indexers) (uint64, error) {
			return cachedBytes(memoryObjects, agentPod, t, ix)
		}, trimPod, cacheIndexers(&corev1.Pod{})},
	} {
		type variant struct {
			name      string
			transform toolscache.TransformFunc
			indexers  toolscache.Indexers
			// alone: the figure is what indexers add to the trimmed objects.
			alone bool
		}
		variants := []variant{{"trimmed", bc.trim, bc.indexers, false}, {"trimmedUnindexed", bc.trim, nil, false}, {"untrimmed", untrimmed, bc.indexers, false}}
		for _, name := range slices.Sorted(maps.Keys(bc.indexers)) {
			variants = append(variants, variant{"index:" + name, bc.trim, toolscache.Indexers{name: bc.indexers[name]}, true})
		}
		for _, v := range variants {
			b.Run(bc.name+"/"+v.name, func(b *testing.B) {
				var total, unindexed uint64
				for b.Loop() {
					bytes, err := bc.measure(v.transform, v.indexers)
					if err != nil {
						b.Fatal(err)
					}
					total += bytes
					if v.alone {
						if bytes, err = bc.measure(v.transform, nil); err != nil {
							b.Fatal(err)
						}
						unindexed += bytes
					}
				}
				b.ReportMetric((float64(total)-float64(unindexed))/float64(b.N)/memoryObjects, "B/object")
			})
		}
	}
}
