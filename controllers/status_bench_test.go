package controllers

// These benchmarks need no API server: TestMain starts envtest unless the
// run is short, so run them with -short.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// benchSizes are a large cluster and five times that: the ratio of the two
// timings tells a linear walk from one that is not.
var benchSizes = []int{1000, 5000}

// benchNow is the clock of every benchmark: pods became ready an hour
// before it.
var benchNow = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// benchAtSizes runs bench as one sub-benchmark per cluster size.
func benchAtSizes(b *testing.B, bench func(b *testing.B, n int)) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			bench(b, n)
		})
	}
}

// benchCluster is an ExtendedDaemonSet in the middle of a change of
// template, from replica set old to current, on n nodes.
type benchCluster struct {
	eds          *v1alpha1.ExtendedDaemonSet
	old, current *v1alpha1.ExtendedDaemonSetReplicaSet
	nodes        []*corev1.Node
	pods         []*corev1.Pod
}

// nodeRuns says what node i runs: a pod of the current replica set or of
// the old one, ready or crash-looping.
type nodeRuns func(i int) (current, ready bool)

// benchTemplate is a node agent: it selects Linux nodes and tolerates the
// taint of the dedicated nodes, so the fit checks match labels and taints.
func benchTemplate(image string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{corev1.LabelOSStable: "linux"},
			Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "agents",
				Effect: corev1.TaintEffectNoSchedule}},
			Containers: []corev1.Container{{Name: "agent", Image: image}},
		},
	}
}

func benchReplicaSet(name, image string) *v1alpha1.ExtendedDaemonSetReplicaSet {
	return &v1alpha1.ExtendedDaemonSetReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench", Generation: 1, UID: types.UID("uid-" + name)},
		Spec:       v1alpha1.ExtendedDaemonSetReplicaSetSpec{Template: benchTemplate(image)},
	}
}

// benchNode is a Ready node with the labels a cloud node carries; one in
// ten is a dedicated node, tainted.
func benchNode(i int) corev1.Node {
	name := fmt.Sprintf("node-%05d", i)
	node := corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64", corev1.LabelHostname: name,
			corev1.LabelTopologyZone: fmt.Sprintf("zone-%d", i%3), corev1.LabelInstanceTypeStable: "m5.large",
		}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(benchNow.Add(-24 * time.Hour)),
		}}},
	}
	if i%10 == 5 {
		node.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "agents", Effect: corev1.TaintEffectNoSchedule}}
	}
	return node
}

// benchPod is the pod of ers bound to node, as the scheduler and the
// kubelet leave it: running and ready for an hour, or crash-looping.
func benchPod(ers *v1alpha1.ExtendedDaemonSetReplicaSet, node string, ready bool) *corev1.Pod {
	pod := placement.NewPod(&ers.Spec.Template, node, map[string]string{
		v1alpha1.ExtendedDaemonSetNameLabel: "agent", v1alpha1.ExtendedDaemonSetReplicaSetNameLabel: ers.Name,
	})
	pod.Name, pod.Namespace, pod.UID = ers.Name+"-"+node, ers.Namespace, types.UID(ers.Name+"-"+node)
	pod.CreationTimestamp = metav1.NewTime(benchNow.Add(-2 * time.Hour))
	pod.Spec.NodeName = node
	readyStatus, container := corev1.ConditionTrue, corev1.ContainerStatus{Name: "agent", Ready: true,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	if !ready {
		readyStatus, container = corev1.ConditionFalse, corev1.ContainerStatus{Name: "agent", RestartCount: 7,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}
	}
	pod.Status = corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
			{Type: corev1.PodReady, Status: readyStatus, LastTransitionTime: metav1.NewTime(benchNow.Add(-time.Hour))},
		},
		ContainerStatuses: []corev1.ContainerStatus{container},
	}
	return pod
}

// newBenchCluster builds n nodes, each running what runs says, with the
// current replica set active and maxUnavailable 10%.
func newBenchCluster(n int, runs nodeRuns) *benchCluster {
	c := &benchCluster{
		eds: &v1alpha1.ExtendedDaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "bench", Generation: 1},
			Spec: v1alpha1.ExtendedDaemonSetSpec{Template: benchTemplate("agent:v2"), Strategy: v1alpha1.ExtendedDaemonSetStrategy{
				RollingUpdate: v1alpha1.RollingUpdateStrategy{MaxUnavailable: ptr.To(intstr.FromString("10%"))},
			}},
		},
		old:     benchReplicaSet("agent-1", "agent:v1"),
		current: benchReplicaSet("agent-2", "agent:v2"),
		nodes:   make([]*corev1.Node, n),
		pods:    make([]*corev1.Pod, n),
	}
	c.eds.Status.ActiveReplicaSet = c.current.Name
	for i := range c.nodes {
		node := benchNode(i)
		c.nodes[i] = &node
		current, ready := runs(i)
		ers := c.old
		if current {
			ers = c.current
		}
		c.pods[i] = benchPod(ers, c.nodes[i].Name, ready)
	}
	return c
}

// benchRolledOut: every node runs an available pod of the current replica
// set.
func benchRolledOut(n int) *benchCluster {
	return newBenchCluster(n, func(int) (bool, bool) { return true, true })
}

// benchStalledUpdate is a rolling update halfway through whose new pods
// crash on a tenth of the nodes: maxUnavailable is spent, and the progress
// deadline names the nodes held back.
func benchStalledUpdate(n int) *benchCluster {
	return newBenchCluster(n, func(i int) (bool, bool) { return i%2 == 0, i%10 != 0 })
}

// benchCanary is a canary of the current replica set on a tenth of the
// nodes, the old one active on the others, every pod available.
func benchCanary(n int) *benchCluster {
	onCanary := func(i int) bool { return i%10 == 0 }
	c := newBenchCluster(n, func(i int) (bool, bool) { return onCanary(i), true })
	started := metav1.NewTime(benchNow.Add(-5 * time.Minute))
	canary := &v1alpha1.CanaryStatus{ReplicaSet: c.current.Name, StartedAt: &started, ReadyAt: &started,
		Analysis: &v1alpha1.AnalysisStatus{Phase: v1alpha1.AnalysisRunning, Message: "1 of 2 metrics successful"}}
	for i := range c.nodes {
		if onCanary(i) {
			canary.Nodes = append(canary.Nodes, c.nodes[i].Name)
		}
	}
	c.eds.Status.ActiveReplicaSet, c.eds.Status.Canary = c.old.Name, canary
	return c
}

// newObservation is the empty observation of ers that observe starts
// from, and the nodes its role makes it responsible for.
func (c *benchCluster) newObservation(ers *v1alpha1.ExtendedDaemonSetReplicaSet) (*observation, func(string) bool) {
	obs := &observation{
		role:         canary.RoleOf(c.eds, ers.Name),
		returning:    returnsAtOnce(c.eds, ers),
		topologyKey:  topologyKey(c.eds),
		input:        rollout.Input{Pods: map[string][]rollout.Pod{}, Now: benchNow},
		pods:         map[string]*corev1.Pod{},
		unresponsive: map[string]bool{},
		deadline:     c.eds.Spec.ProgressDeadline(),
	}
	return obs, responsibleFor(c.eds, obs.role)
}

// observe is the walk over nodes and pods that observe makes once it has
// listed them from the cache, which these benchmarks have none of: one
// view, stated afresh.
func (c *benchCluster) observe(ers *v1alpha1.ExtendedDaemonSetReplicaSet) (*observation, error) {
	obs, _ := c.newObservation(ers)
	obs.template = &c.eds.Spec.Template
	v := newView(ownViewSpec(c.eds, ers, obs, nil, placement.DefaultUnresponsiveGrace))
	v.restate(nil, c.nodes, c.pods, benchNow)
	obs.from(v)
	var err error
	obs.input.Params, err = rolloutParams(c.eds, ers, v.fitting, benchNow)
	return obs, err
}

// BenchmarkObserve times the pure part of a replica set's observation of a
// rolling update, whole and by step: per node a fit check, per pod its
// state for the planner. Each part returns how many nodes or pods it took
// in: all n of them.
func BenchmarkObserve(b *testing.B) {
	parts := []struct {
		name  string
		count func(c *benchCluster) int
	}{
		{"all", func(c *benchCluster) int {
			obs, err := c.observe(c.current)
			if err != nil || obs.input.Params.MaxUnavailable != (len(c.nodes)+9)/10 {
				return -1
			}
			return len(obs.pods)
		}},
		{"addNodes", func(c *benchCluster) int {
			obs, responsible := c.newObservation(c.current)
			obs.addNodes(c.nodes, &c.current.Spec.Template, responsible)
			return len(obs.input.Nodes)
		}},
		{"addPods", func(c *benchCluster) int {
			obs, responsible := c.newObservation(c.current)
			obs.addPods(c.pods, c.nodes, c.current.Name, responsible)
			return len(obs.pods)
		}},
	}
	for _, part := range parts {
		b.Run(part.name, func(b *testing.B) {
			benchAtSizes(b, func(b *testing.B, n int) {
				c := benchStalledUpdate(n)
				if got := part.count(c); got != n {
					b.Fatalf("took in %d, want %d", got, n)
				}
				for b.Loop() {
					part.count(c)
				}
			})
		})
	}
}

// observedStatus observes ers in c, plans, and computes its status at now,
// as a reconcile that wrote nothing would.
func (c *benchCluster) observedStatus(ers *v1alpha1.ExtendedDaemonSetReplicaSet, now time.Time) (*observation, rollout.Plan, error) {
	obs, err := c.observe(ers)
	if err != nil {
		return nil, rollout.Plan{}, err
	}
	plan := rollout.Compute(obs.input)
	setReplicaSetStatus(ers, obs, plan, nil, now)
	return obs, plan, nil
}

// expectCondition says how obj's condition of type kind differs from
// status and reason, nil when it does not.
func expectCondition(obj conditions.Getter, kind string, status metav1.ConditionStatus, reason string) error {
	cond := conditions.Get(obj, kind)
	if cond == nil || cond.Status != status || cond.Reason != reason {
		return fmt.Errorf("condition %s is %+v, want %s %s", kind, cond, status, reason)
	}
	return nil
}

// BenchmarkSetReplicaSetStatus times the status of the active replica set,
// rolled out, and stalled: no progress for an hour, so the message walks
// every node for those held back. The status was computed by an earlier
// reconcile, as in the controller.
func BenchmarkSetReplicaSetStatus(b *testing.B) {
	for _, bc := range []struct {
		name  string
		build func(n int) *benchCluster
		check func(ers *v1alpha1.ExtendedDaemonSetReplicaSet) error
	}{
		{"rolledOut", benchRolledOut, func(ers *v1alpha1.ExtendedDaemonSetReplicaSet) error {
			return expectCondition(ers, v1alpha1.ReadyCondition, metav1.ConditionTrue, v1alpha1.ReasonRolledOut)
		}},
		{"stalled", benchStalledUpdate, func(ers *v1alpha1.ExtendedDaemonSetReplicaSet) error {
			if err := expectCondition(ers, v1alpha1.StalledCondition, metav1.ConditionTrue, v1alpha1.ReasonProgressDeadlineExceeded); err != nil {
				return err
			}
			if msg := conditions.GetMessage(ers, v1alpha1.StalledCondition); !strings.Contains(msg, "CrashLoopBackOff") {
				return fmt.Errorf("the stall does not say why: %q", msg)
			}
			return nil
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			benchAtSizes(b, func(b *testing.B, n int) {
				c := bc.build(n)
				ers := c.current
				obs, plan, err := c.observedStatus(ers, benchNow.Add(-time.Hour))
				if err != nil {
					b.Fatal(err)
				}
				setReplicaSetStatus(ers, obs, plan, nil, benchNow)
				if err := bc.check(ers); err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					setReplicaSetStatus(ers, obs, plan, nil, benchNow)
				}
			})
		})
	}
}

// BenchmarkSetExtendedDaemonSetStatus times the status of an
// ExtendedDaemonSet rolled out, and running a canary, from the statuses
// of its replica sets.
func BenchmarkSetExtendedDaemonSetStatus(b *testing.B) {
	for _, bc := range []struct {
		name  string
		build func(n int) *benchCluster
		state v1alpha1.ExtendedDaemonSetState
	}{
		{"rolledOut", benchRolledOut, v1alpha1.StateRunning},
		{"canary", benchCanary, v1alpha1.StateCanary},
	} {
		b.Run(bc.name, func(b *testing.B) {
			benchAtSizes(b, func(b *testing.B, n int) {
				c := bc.build(n)
				sets := []*v1alpha1.ExtendedDaemonSetReplicaSet{c.old, c.current}
				for _, ers := range sets {
					if _, _, err := c.observedStatus(ers, benchNow); err != nil {
						b.Fatal(err)
					}
				}
				obs := edsObservation{sets: sets, current: c.current}
				setExtendedDaemonSetStatus(c.eds, obs, nil)
				if st := c.eds.Status; st.State != bc.state || int(st.Desired) != n || int(st.Available) != n {
					b.Fatalf("state %s, %d desired, %d available; want %s, %d, %d", st.State, st.Desired, st.Available, bc.state, n, n)
				}
				for b.Loop() {
					setExtendedDaemonSetStatus(c.eds, obs, nil)
				}
			})
		})
	}
}
