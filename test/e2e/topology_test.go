package e2e

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/test/invariants"
)

// topologyZones and nodesPerZone make the node group of the topology test.
var topologyZones = []string{"zone-a", "zone-b", "zone-c"}

const nodesPerZone = 3

// A sequential zone rollout on three zones, with a global budget that
// would let it take two zones' worth of nodes at once: the pods alone show
// one zone at a time, in order, and never more than one node of a zone
// without an available agent.
func TestTopologySequentialZones(t *testing.T) {
	s := newScenario(t)
	const group = "topology"
	nodes, zoneOf := s.addZonedNodes(group)
	eds := agentEDS(s.ns, "agent", "v1")
	eds.Spec.Template.Spec.NodeSelector = onGroup(group)
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(2 * nodesPerZone))
	eds.Spec.Strategy.RollingUpdate.Topology = &v1alpha1.RollingUpdateTopology{Key: corev1.LabelTopologyZone}
	eds = s.create(eds)
	eds, _ = s.expectRolledOut(eds, "v1", nodes)

	_, active, seen := s.rollZones(eds, "v2", nodes, zoneOf)
	s.g.Expect(active.Status.Domains).To(gomega.HaveLen(len(topologyZones)))
	for i, d := range active.Status.Domains {
		s.g.Expect(d).To(gomega.Equal(v1alpha1.DomainStatus{Name: topologyZones[i], State: v1alpha1.DomainDone, Desired: nodesPerZone, UpToDate: nodesPerZone}))
	}
	s.t.Logf("zones started in order %v; at most %d in progress at once, %d nodes of one zone and %d in all without an available agent",
		seen.started, seen.maxInProgress, seen.maxZoneUnavailable, seen.maxUnavailable)
	s.g.Expect(seen.started).To(gomega.Equal(topologyZones), "order the zones started in")
	s.g.Expect(seen.maxInProgress).To(gomega.Equal(1), "zones updating at once")
	s.g.Expect(seen.maxZoneUnavailable).To(gomega.Equal(1), "nodes of one zone without an available agent at once")
	s.g.Expect(seen.maxUnavailable).To(gomega.BeNumerically("<=", 2*nodesPerZone), "nodes without an available agent at once")
}

// addZonedNodes adds the node group of a zone test, nodesPerZone nodes in
// each of topologyZones, and returns them with their zones.
func (s *scenario) addZonedNodes(group string) (nodes []string, zoneOf map[string]string) {
	s.t.Helper()
	nodes = groupNodeNames(group, len(topologyZones)*nodesPerZone)
	s.addNodeGroup(group, nodes...)
	zoneOf = map[string]string{}
	for i, name := range nodes {
		zoneOf[name] = topologyZones[i%len(topologyZones)]
		s.updateNode(name, func(n *corev1.Node) { n.Labels[corev1.LabelTopologyZone] = zoneOf[name] })
	}
	return nodes, zoneOf
}

// rollZones changes eds to version and waits until it is rolled out to
// nodes, watching its zones meanwhile; it returns the ExtendedDaemonSet and
// its active replica set as last seen, and what the zone watcher saw.
func (s *scenario) rollZones(eds *v1alpha1.ExtendedDaemonSet, version string, nodes []string, zoneOf map[string]string,
) (*v1alpha1.ExtendedDaemonSet, *v1alpha1.ExtendedDaemonSetReplicaSet, zoneCounts) {
	s.t.Helper()
	zones, err := watchZones(s, eds, zoneOf)
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, version) })
	latest, active := s.expectRolledOut(eds, version, nodes)
	seen, err := zones.stop()
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	return latest, active, seen
}

// zoneWatcher follows the pods of an ExtendedDaemonSet through a watch, as
// the pod watcher does, and measures the rollout zone by zone.
type zoneWatcher struct {
	zoneOf  map[string]string
	version string
	watcher *watchtools.RetryWatcher
	done    chan struct{}

	mu   sync.Mutex
	pods map[types.UID]zonePod
	seen zoneCounts
	err  error
}

type zonePod struct {
	node               string
	updated            bool
	ready, terminating bool
}

// zoneCounts are what the zone watcher saw.
type zoneCounts struct {
	// started lists the zones in the order their first pod was replaced.
	started []string
	// maxInProgress is the largest number of zones at once replacing pods:
	// some node has a new pod or has lost its old one, and some node is
	// not yet on an available new pod alone.
	maxInProgress int
	// maxZoneUnavailable is the largest number of nodes of one zone at once
	// without a ready pod, and maxUnavailable of all nodes.
	maxZoneUnavailable, maxUnavailable int
}

// watchZones starts watching the pods of eds; zoneOf holds the desired
// nodes and their zones. Pods of another image than the current one of
// eds are new.
func watchZones(s *scenario, eds *v1alpha1.ExtendedDaemonSet, zoneOf map[string]string) (*zoneWatcher, error) {
	list, rw, err := listAndWatchPods(s.ctx, eds.Namespace, edsPods(eds.Name))
	if err != nil {
		return nil, err
	}
	w := &zoneWatcher{zoneOf: zoneOf, version: eds.Spec.Template.Spec.Containers[0].Image, watcher: rw,
		done: make(chan struct{}), pods: map[types.UID]zonePod{}}
	for i := range list.Items {
		w.pods[list.Items[i].UID] = w.stateOf(&list.Items[i])
	}
	go w.follow()
	return w, nil
}

func (w *zoneWatcher) stateOf(pod *corev1.Pod) zonePod {
	return zonePod{
		node: placement.TargetNode(pod), updated: pod.Spec.Containers[0].Image != w.version,
		ready: invariants.RunningAndReady(pod), terminating: pod.DeletionTimestamp != nil,
	}
}

func (w *zoneWatcher) follow() {
	defer close(w.done)
	for ev := range w.watcher.ResultChan() {
		w.mu.Lock()
		pod, ok := ev.Object.(*corev1.Pod)
		switch {
		case ev.Type == watch.Error || !ok:
			w.err = fmt.Errorf("pod watch failed: %v", ev.Object)
		case ev.Type == watch.Deleted:
			delete(w.pods, pod.UID)
		default:
			w.pods[pod.UID] = w.stateOf(pod)
		}
		w.measure()
		w.mu.Unlock()
	}
}

// measure updates the counts with the pods now; w.mu is held.
func (w *zoneWatcher) measure() {
	type node struct{ old, updated, ready bool }
	nodes := map[string]*node{}
	for name := range w.zoneOf {
		nodes[name] = &node{}
	}
	for _, p := range w.pods {
		n := nodes[p.node]
		if n == nil || p.terminating {
			continue
		}
		if p.updated {
			n.updated = true
		} else {
			n.old = true
		}
		n.ready = n.ready || p.ready
	}
	touched, finished, unavailable := map[string]bool{}, map[string]bool{}, map[string]int{}
	for _, zone := range w.zoneOf {
		finished[zone] = true
	}
	total := 0
	for name, n := range nodes {
		zone := w.zoneOf[name]
		if n.updated || !n.old {
			touched[zone] = true
		}
		if n.old || !n.updated || !n.ready {
			finished[zone] = false
		}
		if !n.ready {
			unavailable[zone]++
			total++
		}
	}
	inProgress := 0
	for _, zone := range topologyZones {
		if touched[zone] && !finished[zone] {
			inProgress++
		}
		if touched[zone] && !slices.Contains(w.seen.started, zone) {
			w.seen.started = append(w.seen.started, zone)
		}
		w.seen.maxZoneUnavailable = max(w.seen.maxZoneUnavailable, unavailable[zone])
	}
	w.seen.maxInProgress = max(w.seen.maxInProgress, inProgress)
	w.seen.maxUnavailable = max(w.seen.maxUnavailable, total)
}

func (w *zoneWatcher) stop() (zoneCounts, error) {
	w.watcher.Stop()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen, w.err
}

// A failed canary's nodes go back to the stable version at once, whatever
// the zones' order and bake: restoring the known-good template is not a
// rollout of a new one. With an hour of bake, a zone-by-zone return would
// leave the failed version on the later zones for an hour or more.
func TestFailedCanaryReturnsEveryZoneWithoutWaitingForBakes(t *testing.T) {
	s := newScenario(t)
	const group = "failzones"
	nodes, _ := s.addZonedNodes(group)
	eds := agentEDS(s.ns, "agent", "v1")
	eds.Spec.Template.Spec.NodeSelector = onGroup(group)
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(int32(len(topologyZones))))
	eds.Spec.Strategy.RollingUpdate.Topology = &v1alpha1.RollingUpdateTopology{
		Key: corev1.LabelTopologyZone, DomainBakeTime: &metav1.Duration{Duration: time.Hour},
	}
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(int32(len(topologyZones)))), Duration: &metav1.Duration{Duration: time.Hour},
	}
	eds = s.create(eds)
	eds, _ = s.expectRolledOut(eds, "v1", nodes)

	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	canary := s.expectCanary(eds, canaryRunning, "").Status.Canary
	s.g.Expect(canary.Nodes).To(gomega.HaveLen(len(topologyZones)), "one canary node per zone")
	s.expectVersions(eds, nodes, "v1", canary.Nodes, "v2")

	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { annotate(e, v1alpha1.CanaryFailedAnnotation, canary.ReplicaSet) })
	s.expectVersions(eds, nodes, "v1", nil, "")
}
