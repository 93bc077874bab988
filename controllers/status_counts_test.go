package controllers

// Pure tests: run them with -short (TestMain starts envtest otherwise).

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// expectWithinDesired fails unless no counter of a status view exceeds
// its desired nodes.
func expectWithinDesired(t *testing.T, view string, desired int32, counters map[string]int32) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(counters)) {
		if n := counters[name]; n > desired {
			t.Errorf("%s: %s %d of %d desired", view, name, n, desired)
		}
	}
}

func replicaSetCounters(st v1alpha1.ExtendedDaemonSetReplicaSetStatus) map[string]int32 {
	return map[string]int32{"current": st.Current, "ready": st.Ready, "available": st.Available, "upToDate": st.UpToDate}
}

// No status says more nodes run, are ready, available or up to date than
// should: not while a failed canary's nodes go back (the canary replica
// set's last status still counting its pods), not with a duplicate pod on
// a node, not for a replica set that no node wants any more.
func TestCountersNeverExceedDesired(t *testing.T) {
	g := gomega.NewWithT(t)
	// Six nodes: the canary of agent-2 failed on nodes 0 and 1; node 0 is
	// back on agent-1, node 1 still runs the canary's pod, and node 2 runs
	// a duplicate of agent-1's pod besides its own.
	c := newBenchCluster(6, func(i int) (bool, bool) { return i == 1, true })
	c.eds.Status.ActiveReplicaSet = c.old.Name
	c.eds.Status.Canary = &v1alpha1.CanaryStatus{ReplicaSet: c.current.Name, Nodes: []string{c.nodes[0].Name, c.nodes[1].Name},
		Failed: true, Reason: v1alpha1.ReasonAnalysisFailed, StartedAt: &metav1.Time{Time: benchNow.Add(-10 * time.Minute)}}
	duplicate := benchPod(c.old, c.nodes[2].Name, true)
	duplicate.Name += "-2"
	duplicate.CreationTimestamp = metav1.NewTime(benchNow.Add(-time.Minute))
	c.pods = append(c.pods, duplicate)
	// What the canary replica set wrote while it ran, not yet rewritten.
	c.current.Status = v1alpha1.ExtendedDaemonSetReplicaSetStatus{Status: v1alpha1.ReplicaSetCanary, ObservedGeneration: 1,
		Desired: 2, Current: 2, Ready: 2, Available: 2, UpToDate: 2}
	stale := c.current.DeepCopy()

	for _, ers := range []*v1alpha1.ExtendedDaemonSetReplicaSet{c.old, c.current} {
		_, _, err := c.observedStatus(ers, benchNow)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		expectWithinDesired(t, "replica set "+ers.Name, ers.Status.Desired, replicaSetCounters(ers.Status))
	}
	g.Expect(c.old.Status.Desired).To(gomega.BeEquivalentTo(6))

	for name, sets := range map[string][]*v1alpha1.ExtendedDaemonSetReplicaSet{
		"fresh":                  {c.old, c.current},
		"canary status not seen": {c.old, stale},
	} {
		eds := c.eds.DeepCopy()
		setExtendedDaemonSetStatus(eds, edsObservation{sets: sets, current: sets[1], now: benchNow}, nil)
		st := eds.Status
		g.Expect(st.Desired).To(gomega.BeEquivalentTo(6), name)
		expectWithinDesired(t, "ExtendedDaemonSet, "+name, st.Desired, map[string]int32{
			"current": st.Current, "ready": st.Ready, "available": st.Available, "upToDate": st.UpToDate,
		})
	}
}
