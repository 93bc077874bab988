package controllers

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/store"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// eventStream plays random watch events on a scaleCluster: pods turning
// ready or not, failing, terminating, deleted and created (duplicates
// too), writes the cache shows late, nodes going NotReady, cordoned,
// relabelled, deleted and added, and time moving on. Each event changes
// the informer's store, then records the journal entry its watch handler
// would.
type eventStream struct {
	c     *scaleCluster
	rnd   *rand.Rand
	next  int
	owner types.NamespacedName
	// late are pods created whose creation the cache shows later, and
	// pods deleted whose deletion it shows later.
	lateCreated, lateDeleted []*corev1.Pod
}

// pods and nodes are in name order, so that a seed tells one stream.
func (e *eventStream) pods() []*corev1.Pod {
	pods, _ := e.c.store.PodsOf(context.Background(), e.c.eds.Namespace, e.c.eds.Name)
	slices.SortFunc(pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return pods
}

func (e *eventStream) nodes() []*corev1.Node {
	nodes, _ := e.c.store.AllNodes(context.Background())
	slices.SortFunc(nodes, func(a, b *corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	return nodes
}

func (e *eventStream) putPod(pod *corev1.Pod) {
	if err := e.c.podStore.Update(pod); err != nil {
		panic(err)
	}
	e.c.journal.PodChanged(e.owner.String(), placement.TargetNode(pod))
}

func (e *eventStream) deletePod(pod *corev1.Pod) {
	if err := e.c.podStore.Delete(pod); err != nil {
		panic(err)
	}
	e.c.journal.PodChanged(e.owner.String(), placement.TargetNode(pod))
}

func (e *eventStream) putNode(node *corev1.Node) {
	if err := e.c.nodeStore.Update(node); err != nil {
		panic(err)
	}
	e.c.journal.NodeChanged(node.Name)
}

// written records a write of the controller's on node in the journal, as
// the pass that writes does (journalWrites).
func (e *eventStream) written(node string) {
	e.c.journal.PodChanged(e.owner.String(), node)
}

// step plays one random event and says which.
func (e *eventStream) step() string {
	pods, nodes := e.pods(), e.nodes()
	if len(pods) == 0 || len(nodes) == 0 {
		return "nothing"
	}
	pod := pods[e.rnd.IntN(len(pods))].DeepCopy()
	node := nodes[e.rnd.IntN(len(nodes))].DeepCopy()
	ers := e.c.old
	if e.rnd.IntN(2) == 0 {
		ers = e.c.current
	}
	switch e.rnd.IntN(16) {
	case 0, 1, 2:
		ready := e.rnd.IntN(2) == 0
		e.putPod(withReadiness(pod, ready))
		if ready && e.rnd.IntN(2) == 0 {
			// Ready only just now: available after minReadySeconds.
			for i := range pod.Status.Conditions {
				pod.Status.Conditions[i].LastTransitionTime = metav1.NewTime(e.c.now)
			}
		}
		return "readiness " + pod.Name
	case 3:
		pod.Status.Phase = corev1.PodFailed
		e.putPod(pod)
		return "failed " + pod.Name
	case 4:
		pod.DeletionTimestamp = &metav1.Time{Time: e.c.now}
		e.putPod(pod)
		return "terminating " + pod.Name
	case 5:
		e.deletePod(pod)
		return "deleted " + pod.Name
	case 6:
		e.next++
		created := benchPod(ers, node.Name, e.rnd.IntN(2) == 0)
		created.Name, created.UID = fmt.Sprintf("%s-%d", created.Name, e.next), types.UID(fmt.Sprintf("%s-%d", created.UID, e.next))
		created.CreationTimestamp = metav1.NewTime(e.c.now)
		if e.rnd.IntN(2) == 0 {
			e.c.expectations.Created(e.owner, created, e.c.now)
			e.written(node.Name)
			e.lateCreated = append(e.lateCreated, created)
			return "created, not cached yet, " + created.Name
		}
		e.putPod(created)
		return "created " + created.Name
	case 7:
		e.c.expectations.Deleted(e.owner, pod, e.c.now)
		e.written(placement.TargetNode(pod))
		e.lateDeleted = append(e.lateDeleted, pod)
		return "deleted, still cached, " + pod.Name
	case 8:
		if len(e.lateCreated) > 0 {
			created := e.lateCreated[0]
			e.lateCreated = e.lateCreated[1:]
			e.putPod(created)
			return "cache shows " + created.Name
		}
		if len(e.lateDeleted) > 0 {
			deleted := e.lateDeleted[0]
			e.lateDeleted = e.lateDeleted[1:]
			if _, ok, _ := e.c.podStore.Get(deleted); ok {
				e.deletePod(deleted)
			}
			return "cache shows " + deleted.Name + " gone"
		}
		return "nothing late"
	case 9, 10:
		status := corev1.ConditionTrue
		if e.rnd.IntN(2) == 0 {
			status = corev1.ConditionUnknown
		}
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status,
			LastTransitionTime: metav1.NewTime(e.c.now.Add(-time.Duration(e.rnd.IntN(600)) * time.Second))}}
		e.putNode(node)
		return fmt.Sprintf("node %s Ready %s", node.Name, status)
	case 11:
		node.Spec.Unschedulable = !node.Spec.Unschedulable
		e.putNode(node)
		return "cordon " + node.Name
	case 12:
		node.Labels[corev1.LabelTopologyZone] = fmt.Sprintf("zone-%d", e.rnd.IntN(4))
		if e.rnd.IntN(3) == 0 {
			node.Labels[corev1.LabelOSStable] = "windows"
		} else {
			node.Labels[corev1.LabelOSStable] = "linux"
		}
		e.putNode(node)
		return "relabel " + node.Name
	case 13:
		if err := e.c.nodeStore.Delete(node); err != nil {
			panic(err)
		}
		e.c.journal.NodeChanged(node.Name)
		return "node deleted " + node.Name
	case 14:
		e.next++
		added := benchNode(1000 + e.next)
		e.putNode(&added)
		return "node added " + added.Name
	default:
		e.c.now = e.c.now.Add(time.Duration(e.rnd.IntN(120)) * time.Second)
		return "time " + e.c.now.Format(time.TimeOnly)
	}
}

// freshView states every node for spec, as the first pass does.
func (c *scaleCluster) freshView(spec viewSpec) (*view, error) {
	st := &stater{source: c.store, journal: c.journal, expectations: c.expectations, eds: c.eds, now: c.now}
	return st.afresh(context.Background(), spec)
}

// comparePass runs the pass of ers on its kept views and says how they,
// and the plan, differ from a view stated afresh.
func (c *scaleCluster) comparePass(ers *v1alpha1.ExtendedDaemonSetReplicaSet) error {
	obs, plan, err := c.replicaSetPass(ers)
	if err != nil {
		return err
	}
	fresh, err := c.freshView(obs.view.spec)
	if err != nil {
		return err
	}
	if diff := obs.view.differs(fresh); diff != "" {
		return fmt.Errorf("%s: kept view: %s", ers.Name, diff)
	}
	in := obs.input
	in.Nodes, in.Pods = fresh.nodes, fresh.pods
	if diff := rollout.DiffPlans(rollout.Compute(in), plan); diff != "" {
		return fmt.Errorf("%s: the plan differs from a full one (-full +kept):\n%s", ers.Name, diff)
	}
	if kept := c.views.of(types.NamespacedName{Namespace: ers.Namespace, Name: ers.Name}); kept.other != nil {
		freshOther, err := c.freshView(kept.other.spec)
		if err != nil {
			return err
		}
		if diff := kept.other.differs(freshOther); diff != "" {
			return fmt.Errorf("%s: kept view of the other replica set: %s", ers.Name, diff)
		}
	}
	return nil
}

// The views a replica set keeps from pass to pass, stating again only the
// nodes the journal names, say what a view stated afresh from the cache
// says, and the plans agree, on random streams of watch events: for the
// active replica set of a rolling update and the one it replaces, and for
// both replica sets of a canary, each with its view of the other.
func TestKeptViewsStateWhatAFreshViewStates(t *testing.T) {
	seeds, steps := 60, 120
	if testing.Short() {
		seeds = 30
	}
	for seed := range seeds {
		build := benchRollingUpdate
		if seed%2 == 1 {
			build = scaleCanary
		}
		c, err := newScaleCluster(build(24))
		if err != nil {
			t.Fatal(err)
		}
		c.eds.Spec.MinReadySeconds = 30
		e := &eventStream{c: c, rnd: rand.New(rand.NewPCG(uint64(seed), 28)), owner: edsKey(c.eds)}
		// The old replica set is the canary's stable one, or, during a
		// rolling update, one without a role that only counts its pods.
		sets := []*v1alpha1.ExtendedDaemonSetReplicaSet{c.current, c.old}
		var story []string
		for step := range steps {
			story = append(story, e.step())
			for _, ers := range sets {
				if err := c.comparePass(ers); err != nil {
					t.Fatalf("seed %d, step %d: %v\nevents: %s", seed, step, err, strings.Join(story, "; "))
				}
			}
		}
		if len(c.mismatches) > 0 {
			t.Fatalf("seed %d: the periodic check found %v", seed, c.mismatches)
		}
	}
}

// A change the journal never heard of (a missed event) stays unseen by a
// kept view until the periodic check states it afresh, reports the
// mismatch, and repairs it.
func TestViewCheckRepairsAMissedChange(t *testing.T) {
	c, err := newScaleCluster(benchRolledOut(10))
	if err != nil {
		t.Fatal(err)
	}
	// The first pass makes the replica set active, which its second
	// states the nodes for afresh.
	for range 2 {
		if _, _, err := c.replicaSetPass(c.current); err != nil {
			t.Fatal(err)
		}
	}
	pod := withReadiness(c.pods[3], false)
	if err := c.podStore.Update(pod); err != nil {
		t.Fatal(err)
	}
	available := func() int32 {
		if _, _, err := c.replicaSetPass(c.current); err != nil {
			t.Fatal(err)
		}
		return c.current.Status.Available
	}
	if got := available(); got != 10 {
		t.Fatalf("before the check: %d available, want the 10 the kept view still says", got)
	}
	c.now = c.now.Add(DefaultViewCheckInterval)
	if got := available(); got != 9 {
		t.Fatalf("after the check: %d available, want 9", got)
	}
	if len(c.mismatches) != 1 || !strings.Contains(c.mismatches[0], pod.Name) {
		t.Fatalf("mismatches %q, want one naming %s", c.mismatches, pod.Name)
	}
}

// The journal tells each reader what changed since its cursor, each node
// once; a reader that fell behind what the journal keeps states
// everything again.
func TestJournalSince(t *testing.T) {
	j := store.NewJournal()
	changed, c, complete := j.Since("ns/agent", store.Cursor{})
	if complete || changed != nil {
		t.Fatalf("first read: %v, complete %t; want a full statement", changed, complete)
	}
	j.NodeChanged("a")
	j.PodChanged("ns/agent", "b")
	j.PodChanged("ns/other", "c")
	j.PodChanged("ns/agent", "a")
	changed, c, complete = j.Since("ns/agent", c)
	if want := map[string]bool{"a": true, "b": true}; !complete || !reflect.DeepEqual(changed, want) {
		t.Fatalf("changed %v, complete %t; want %v", changed, complete, want)
	}
	if changed, _, complete = j.Since("ns/agent", c); !complete || len(changed) != 0 {
		t.Fatalf("nothing new: changed %v, complete %t", changed, complete)
	}
	for i := range 1 << 17 {
		j.NodeChanged(fmt.Sprint(i))
	}
	if _, _, complete = j.Since("ns/agent", c); complete {
		t.Fatal("a reader behind what the journal keeps was told it is complete")
	}
}

// The budgets' percentages resolve against the nodes the
// ExtendedDaemonSet's template fits, whether the replica set's own
// template fits the same nodes (its statement says) or others.
func TestViewCountsTheNodesTheTemplateFits(t *testing.T) {
	c := benchRolledOut(20)
	linux := benchTemplate("agent:v2")
	windows := benchTemplate("agent:v1")
	windows.Spec.NodeSelector = map[string]string{corev1.LabelOSStable: "windows"}
	for i := range 5 {
		c.nodes[i].Labels[corev1.LabelOSStable] = "windows"
	}
	for _, tc := range []struct {
		name                string
		template, percentOf *corev1.PodTemplateSpec
		want                int
	}{
		{"same fit", &linux, &linux, 15},
		{"the replica set's template fits other nodes", &windows, &linux, 15},
		{"the ExtendedDaemonSet's template fits other nodes", &linux, &windows, 5},
	} {
		v := newView(viewSpec{role: v1alpha1.ReplicaSetActive, name: "agent-2", template: tc.template, percentOf: tc.percentOf,
			responsible: func(node string) bool { return node != "node-00019" }, grace: time.Minute})
		v.restate(nil, c.nodes, c.pods, benchNow)
		if v.fitting != tc.want {
			t.Errorf("%s: fitting %d, want %d", tc.name, v.fitting, tc.want)
		}
	}
}

// A pod a pass created that the cache shows before its event's handler
// records it, whose expectation another replica set's pass then forgets
// (the cache shows the pod): the next pass of the replica set that created
// it still states its node, from the entry the writing pass recorded
// (journalWrites). Without it, the pass planned on a node it thought
// empty of its pod and created a second one, three agents on a node during
// a surge.
func TestAWrittenNodeIsStatedAgainWhateverTheCacheShowsFirst(t *testing.T) {
	c, err := newScaleCluster(benchRollingUpdate(10))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		for _, ers := range []*v1alpha1.ExtendedDaemonSetReplicaSet{c.current, c.old} {
			if _, _, err := c.replicaSetPass(ers); err != nil {
				t.Fatal(err)
			}
		}
	}
	owner := edsKey(c.eds)
	created := benchPod(c.current, "node-00003", true)
	created.Name, created.UID = created.Name+"-surge", created.UID+"-surge"
	// The pass that creates it records the write and the node.
	c.expectations.Created(owner, created, c.now)
	(&ReplicaSetReconciler{journal: c.journal}).journalWrites(c.eds, &observation{}, rollout.Plan{Create: []string{"node-00003"}})
	// The cache shows it; its handler has not run yet.
	if err := c.podStore.Update(created); err != nil {
		t.Fatal(err)
	}
	// The other replica set's pass sees it in the cache and forgets it.
	if _, _, err := c.replicaSetPass(c.old); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(c.expectations.Nodes(owner), "node-00003") {
		t.Fatal("the expectation should be forgotten once the cache shows the pod")
	}
	if err := c.comparePass(c.current); err != nil {
		t.Fatal(err)
	}
}
