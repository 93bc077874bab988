package controllers

// The scale benchmarks time what a reconcile decides once it has read the
// cache, on clusters no simulated API server here can hold: a pass that
// states every node (a replica set's first, or its periodic check), and a
// pod event, whose pass states again only the node the journal names. Run
// them with -short (no envtest) and few iterations: `make bench` runs them
// with -benchtime 3x at the sizes of BENCH_SCALE_NODES.

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/store"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// scaleNodesEnv lists the cluster sizes of the scale benchmarks, comma
// separated; the largest take seconds a pass and a gigabyte to build, so
// a run can leave them out.
const scaleNodesEnv = "SCALE_NODES"

// defaultScaleSizes go from twice the 5,000 nodes the simulated benchmark
// has run on to the largest cluster a cloud provider supports.
var defaultScaleSizes = []int{10000, 50000, 100000}

// scaleSizes are the sizes SCALE_NODES names, the defaults when unset.
func scaleSizes(b *testing.B) []int {
	env := os.Getenv(scaleNodesEnv)
	if env == "" {
		return defaultScaleSizes
	}
	var sizes []int
	for _, f := range strings.Split(env, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 10 {
			b.Fatalf("%s=%q: want a comma-separated list of node counts of at least 10", scaleNodesEnv, env)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

// scaleCluster is a benchCluster held as the manager's cache holds it: in
// the stores of the pod and node informers, read through store.Store, with
// the journal the watch handlers fill and the views the passes keep.
type scaleCluster struct {
	*benchCluster
	store *store.Store
	// podStore is the pod informer's store, which events update.
	podStore, nodeStore toolscache.Indexer
	journal             *store.Journal
	expectations        *store.Expectations
	// views are the views the replica sets' passes keep; afresh drops
	// them before each pass, which then states every node.
	views  *replicaSetViews
	afresh bool
	// now is when passes run; mismatches are what the periodic check
	// found.
	now        time.Time
	mismatches []string
}

// newScaleCluster puts the nodes and pods of c in informer stores.
func newScaleCluster(c *benchCluster) (*scaleCluster, error) {
	pods := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	nodes := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	for _, pod := range c.pods {
		if err := pods.Add(pod); err != nil {
			return nil, err
		}
	}
	for _, node := range c.nodes {
		if err := nodes.Add(node); err != nil {
			return nil, err
		}
	}
	s, err := store.FromIndexers(pods, nodes)
	return &scaleCluster{
		benchCluster: c, store: s, podStore: pods, nodeStore: nodes, journal: store.NewJournal(), expectations: store.NewExpectations(),
		views: &replicaSetViews{}, now: benchNow,
	}, err
}

// list reads the nodes and the ExtendedDaemonSet's pods from the cache, as
// the ExtendedDaemonSet's reconcile does for a canary's step.
func (c *scaleCluster) list() error {
	var err error
	if c.nodes, err = c.store.AllNodes(context.Background()); err != nil {
		return err
	}
	c.pods, err = c.store.PodsOf(context.Background(), c.eds.Namespace, c.eds.Name)
	return err
}

// podEvent is the cache's update of pod name, ready or not, and the
// journal's record of it, as the watch handler makes.
func (c *scaleCluster) podEvent(name string, ready bool) error {
	obj, ok, err := c.podStore.GetByKey(c.eds.Namespace + "/" + name)
	switch {
	case err != nil:
		return fmt.Errorf("reading pod %s from the cache: %w", name, err)
	case !ok:
		return fmt.Errorf("pod %s is not in the cache", name)
	}
	pod := withReadiness(obj.(*corev1.Pod), ready)
	if err := c.podStore.Update(pod); err != nil {
		return err
	}
	c.journal.PodChanged(c.eds.Namespace+"/"+c.eds.Name, placement.TargetNode(pod))
	return nil
}

// scalePass is what one event makes the controller decide, from reading
// the cache on: each replica set pass the event starts (observe, plan,
// status), and the canary's step when a canary runs. It returns what the
// passes keep until their writes are done.
type scalePass func(c *scaleCluster) (kept []any, err error)

// replicaSetPass is one replica set reconcile without its writes: its
// views brought up to date (its own, and the other replica set's while a
// canary runs), the plan, the status, and the next wake-up.
func (c *scaleCluster) replicaSetPass(ers *v1alpha1.ExtendedDaemonSetReplicaSet) (*observation, rollout.Plan, error) {
	ctx := context.Background()
	if c.afresh {
		c.views = &replicaSetViews{}
	}
	kept := c.views.of(types.NamespacedName{Namespace: ers.Namespace, Name: ers.Name})
	st := &stater{source: c.store, journal: c.journal, expectations: c.expectations, eds: c.eds, now: c.now,
		checkEvery: DefaultViewCheckInterval, mismatch: func(spec viewSpec, diff string) {
			c.mismatches = append(c.mismatches, spec.name+": "+diff)
		}}
	obs, _ := c.newObservation(ers)
	obs.template = &c.eds.Spec.Template
	own, err := st.update(ctx, &kept.own, ownViewSpec(c.eds, ers, obs, nil, placement.DefaultUnresponsiveGrace))
	if err != nil {
		return nil, rollout.Plan{}, err
	}
	obs.from(own)
	obs.input.Now = c.now
	if obs.input.Params, err = rolloutParams(c.eds, ers, own.fitting, c.now); err != nil {
		return nil, rollout.Plan{}, err
	}
	if cs := canary.Running(c.eds); cs != nil {
		other := c.old
		if obs.role == v1alpha1.ReplicaSetActive {
			other = c.current
		}
		spec := otherViewSpec(c.eds, obs, other, false, placement.DefaultUnresponsiveGrace)
		otherView, err := st.update(ctx, c.views.otherOf(kept, types.NamespacedName{Namespace: other.Namespace, Name: other.Name}, spec.key), spec)
		if err != nil {
			return nil, rollout.Plan{}, err
		}
		obs.input.Elsewhere = spentBy(obs, otherView)
	}
	st.checkPlanner(own, obs.input)
	plan := own.state.Plan(obs.input)
	setReplicaSetStatus(ers, obs, plan, nil, c.now)
	own.untilUnresponsive(c.now)
	return obs, plan, nil
}

// activePass is the pass of the active replica set alone: what a pod
// event costs when no canary runs.
func activePass(c *scaleCluster) ([]any, error) {
	obs, plan, err := c.replicaSetPass(c.current)
	return []any{obs, plan}, err
}

// canaryPass is what an event on a canary pod costs: the pass of both
// replica sets, each counting what the other spends, and the canary's step
// in the ExtendedDaemonSet's reconcile.
func canaryPass(c *scaleCluster) ([]any, error) {
	stable, stablePlan, err := c.replicaSetPass(c.old)
	if err != nil {
		return nil, err
	}
	canaryObs, canaryPlan, err := c.replicaSetPass(c.current)
	if err != nil {
		return nil, err
	}
	if err := c.list(); err != nil {
		return nil, err
	}
	in := canary.Input{
		Strategy: canary.Spread(c.eds), Status: c.eds.Status.Canary, ReplicaSet: c.current.Name,
		TemplateHash: c.current.Spec.TemplateGeneration, ProgressDeadline: c.eds.Spec.ProgressDeadline(), Now: benchNow,
	}
	stablePods := observeCanary(&in, c.eds, c.current, labels.Everything(), c.pods, c.nodes)
	res, err := canary.Step(in)
	return []any{stable, stablePlan, canaryObs, canaryPlan, stablePods, res}, err
}

// scaleCanary is benchCanary with its strategy: 10% of the nodes, spread
// over the zones, for ten minutes.
func scaleCanary(n int) *benchCluster {
	c := benchCanary(n)
	c.eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas:             ptr.To(intstr.FromString("10%")),
		Duration:             &metav1.Duration{Duration: 10 * time.Minute},
		NodeAntiAffinityKeys: []string{corev1.LabelTopologyZone},
	}
	c.eds.Status.Canary.Analysis = nil
	return c
}

// benchRollingUpdate is a rolling update halfway through, every pod
// available: maxUnavailable 10% lets a tenth of the nodes go, up to the
// creation cap.
func benchRollingUpdate(n int) *benchCluster {
	return newBenchCluster(n, func(i int) (bool, bool) { return i%2 == 0, true })
}

// scaleScenarios are the states a large cluster spends its time in, with
// what a pass decides there.
var scaleScenarios = []struct {
	name  string
	build func(n int) *benchCluster
	pass  scalePass
	// event is the node whose pod, of the current replica set, the pod
	// events make ready or not.
	event func(n int) int
	check func(c *scaleCluster, n int) error
}{
	{"steadyState", benchRolledOut, activePass, func(n int) int { return n / 2 }, func(c *scaleCluster, n int) error {
		st := c.current.Status
		if int(st.Available) != n || int(st.UpToDate) != n {
			return fmt.Errorf("%d available, %d up to date, want %d", st.Available, st.UpToDate, n)
		}
		return expectCondition(c.current, v1alpha1.ReadyCondition, metav1.ConditionTrue, v1alpha1.ReasonRolledOut)
	}},
	{"rollingUpdate", benchRollingUpdate, activePass, func(n int) int { return 0 }, func(c *scaleCluster, n int) error {
		_, plan, err := c.replicaSetPass(c.current)
		if err != nil {
			return err
		}
		if want := min((n+9)/10, defaultMaxParallelPodCreation); len(plan.Delete) != want || plan.Counts.UpToDate != n/2 {
			return fmt.Errorf("plan deletes %d, counts %d up to date; want %d, %d", len(plan.Delete), plan.Counts.UpToDate, want, n/2)
		}
		return nil
	}},
	{"canaryStep", scaleCanary, canaryPass, func(n int) int { return 0 }, func(c *scaleCluster, n int) error {
		kept, err := canaryPass(c)
		if err != nil {
			return err
		}
		res := kept[len(kept)-1].(canary.Result)
		switch {
		case res.Transition != "" || res.Promote:
			return fmt.Errorf("the canary changed: %q, promoted %t", res.Transition, res.Promote)
		case len(res.Status.Nodes) != (n+9)/10:
			return fmt.Errorf("the canary runs on %d nodes, want %d", len(res.Status.Nodes), (n+9)/10)
		case int(c.current.Status.Available) != (n+9)/10 || int(c.old.Status.Available) != n-(n+9)/10:
			return fmt.Errorf("%d canary pods available and %d stable, want %d and %d",
				c.current.Status.Available, c.old.Status.Available, (n+9)/10, n-(n+9)/10)
		}
		return nil
	}},
}

// withReadiness is pod as the cache holds it once the kubelet has said it
// is ready, or not: a new object, as the informer decodes one per update.
func withReadiness(pod *corev1.Pod, ready bool) *corev1.Pod {
	pod = pod.DeepCopy()
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodReady {
			pod.Status.Conditions[i].Status = status
			pod.Status.Conditions[i].LastTransitionTime = metav1.NewTime(benchNow)
		}
	}
	for i := range pod.Status.ContainerStatuses {
		pod.Status.ContainerStatuses[i].Ready = ready
	}
	return pod
}

// seesEvent says how the pass fails to see pod, of the current replica
// set, turn not ready then ready again.
func seesEvent(c *scaleCluster, pass scalePass, pod string) error {
	if _, err := pass(c); err != nil {
		return err
	}
	available := c.current.Status.Available
	for _, ready := range []bool{false, true} {
		if err := c.podEvent(pod, ready); err != nil {
			return err
		}
		if _, err := pass(c); err != nil {
			return err
		}
		want := available
		if !ready {
			want--
		}
		if c.current.Status.Available != want {
			return fmt.Errorf("pod %s ready %t: %d available, want %d", pod, ready, c.current.Status.Available, want)
		}
	}
	return nil
}

// liveBytes is how much heap what build returns holds once the garbage
// collector has run: the bytes a pass keeps, beside the ones it
// allocates and drops.
func liveBytes(build func() any) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}

// BenchmarkScale times, on clusters of SCALE_NODES nodes each running one
// pod of the ExtendedDaemonSet, a full pass and a pod event (one pod
// turning ready or not, then the pass it starts), in the steady state, a
// rolling update and a canary. Beside time and allocations per operation,
// it reports the bytes per node the pass keeps live (pass-live-B/node:
// the views kept until the next pass, with their planner state) and
// allocates (pass-alloc-B/node).
func BenchmarkScale(b *testing.B) {
	for _, sc := range scaleScenarios {
		b.Run(sc.name, func(b *testing.B) {
			for _, n := range scaleSizes(b) {
				built := sc.build(n)
				// The pod is picked before the cache lists them in no order.
				pod := built.pods[sc.event(n)].Name
				c, err := newScaleCluster(built)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := sc.pass(c); err != nil {
					b.Fatal(err)
				}
				if err := sc.check(c, n); err != nil {
					b.Fatalf("nodes=%d: %v", n, err)
				}
				b.Run(fmt.Sprintf("nodes=%d/pass", n), func(b *testing.B) {
					b.ReportAllocs()
					c.afresh = true
					defer func() { c.afresh = false }()
					// Measured before the timer starts, reported after:
					// the loop's first turn resets the metrics.
					// The views of the last pass go first: a pass
					// keeps its own until the next one.
					c.views = &replicaSetViews{}
					live := liveBytes(func() any { kept, _ := sc.pass(c); return kept })
					var ms runtime.MemStats
					runtime.ReadMemStats(&ms)
					allocated := ms.TotalAlloc
					for b.Loop() {
						if _, err := sc.pass(c); err != nil {
							b.Fatal(err)
						}
					}
					runtime.ReadMemStats(&ms)
					b.ReportMetric(float64(ms.TotalAlloc-allocated)/float64(b.N)/float64(n), "pass-alloc-B/node")
					b.ReportMetric(float64(live)/float64(n), "pass-live-B/node")
				})
				b.Run(fmt.Sprintf("nodes=%d/podEvent", n), func(b *testing.B) {
					b.ReportAllocs()
					ready := true
					if err := seesEvent(c, sc.pass, pod); err != nil {
						b.Fatal(err)
					}
					for b.Loop() {
						ready = !ready
						if err := c.podEvent(pod, ready); err != nil {
							b.Fatal(err)
						}
						if _, err := sc.pass(c); err != nil {
							b.Fatal(err)
						}
					}
					// Ready again, and seen so, for the next run.
					if err := c.podEvent(pod, true); err != nil {
						b.Fatal(err)
					}
					if _, err := sc.pass(c); err != nil {
						b.Fatal(err)
					}
				})
			}
		})
	}
}
