package outcome

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

func TestReplicaSetCounterWriteDelay(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	base := v1alpha1.ExtendedDaemonSetReplicaSetStatus{
		Status: v1alpha1.ReplicaSetActive, Desired: 100, Current: 100, Ready: 90, Available: 90, UpToDate: 40,
		Conditions: []metav1.Condition{{Type: v1alpha1.ReadyCondition, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonRollingUpdate}},
	}
	for _, tc := range []struct {
		name      string
		change    func(*v1alpha1.ExtendedDaemonSetReplicaSetStatus)
		lastWrite time.Time
		want      time.Duration
	}{
		{name: "nothing changed", change: func(*v1alpha1.ExtendedDaemonSetReplicaSetStatus) {}, lastWrite: now, want: 0},
		{
			name: "counters right after a write wait for the rest of the interval",
			change: func(s *v1alpha1.ExtendedDaemonSetReplicaSetStatus) {
				s.UpToDate, s.LastProgressTime = 45, &metav1.Time{Time: now}
				s.ProgressMark = &v1alpha1.ProgressMark{UpToDate: 45}
			},
			lastWrite: now.Add(-300 * time.Millisecond), want: 700 * time.Millisecond,
		},
		{
			name:      "counters once the interval passed",
			change:    func(s *v1alpha1.ExtendedDaemonSetReplicaSetStatus) { s.Available = 91 },
			lastWrite: now.Add(-time.Second), want: 0,
		},
		{name: "counters never written before", change: func(s *v1alpha1.ExtendedDaemonSetReplicaSetStatus) { s.Ready = 95 }, want: 0},
		{
			name: "a condition is written at once",
			change: func(s *v1alpha1.ExtendedDaemonSetReplicaSetStatus) {
				s.UpToDate = 100
				s.Conditions = []metav1.Condition{{Type: v1alpha1.ReadyCondition, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonRolledOut}}
			},
			lastWrite: now, want: 0,
		},
		{name: "a role is written at once", change: func(s *v1alpha1.ExtendedDaemonSetReplicaSetStatus) { s.Status = v1alpha1.ReplicaSetUnknown }, lastWrite: now, want: 0},
		{name: "a new generation is written at once", change: func(s *v1alpha1.ExtendedDaemonSetReplicaSetStatus) { s.ObservedGeneration = 2 }, lastWrite: now, want: 0},
		{
			name: "counters that reach their final figures are written at once",
			change: func(s *v1alpha1.ExtendedDaemonSetReplicaSetStatus) {
				s.Ready, s.Available, s.UpToDate = 100, 100, 100
			},
			lastWrite: now, want: 0,
		},
		{
			name: "an emptied replica set is written at once",
			change: func(s *v1alpha1.ExtendedDaemonSetReplicaSetStatus) {
				s.Desired, s.Current, s.Ready, s.Available, s.UpToDate = 0, 0, 0, 0, 0
			},
			lastWrite: now, want: 0,
		},
		{
			// Nodes moving between replica sets (a canary failing, a step
			// growing) or joining the cluster: the ExtendedDaemonSet's sums
			// and every "x of y" a reader sees wait on it.
			name: "a change of desired nodes is written at once", change: func(s *v1alpha1.ExtendedDaemonSetReplicaSetStatus) { s.Desired = 102 },
			lastWrite: now, want: 0,
		},
		{
			name: "pods the scheduler cannot place are told at once", change: func(s *v1alpha1.ExtendedDaemonSetReplicaSetStatus) { s.Unschedulable = 1 },
			lastWrite: now, want: 0,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			after := *base.DeepCopy()
			tc.change(&after)
			g := gomega.NewWithT(t)
			g.Expect(counterWriteDelay(ReplicaSetCountersOnly(&base, &after), time.Second, tc.lastWrite, now)).To(gomega.Equal(tc.want))
		})
	}
}

func TestExtendedDaemonSetCountersOnly(t *testing.T) {
	g := gomega.NewWithT(t)
	base := v1alpha1.ExtendedDaemonSetStatus{
		Desired: 10, Current: 10, Ready: 8, Available: 8, UpToDate: 3, ActiveReplicaSet: "agent-a",
		Conditions: []metav1.Condition{{Type: v1alpha1.ReadyCondition, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonRollingUpdate}},
	}
	changed := func(change func(*v1alpha1.ExtendedDaemonSetStatus)) bool {
		after := *base.DeepCopy()
		change(&after)
		return ExtendedDaemonSetCountersOnly(&base, &after)
	}
	g.Expect(changed(func(*v1alpha1.ExtendedDaemonSetStatus) {})).To(gomega.BeFalse(), "nothing to write")
	g.Expect(changed(func(s *v1alpha1.ExtendedDaemonSetStatus) { s.UpToDate, s.Available = 4, 9 })).To(gomega.BeTrue())
	g.Expect(changed(func(s *v1alpha1.ExtendedDaemonSetStatus) { s.UpToDate, s.ActiveReplicaSet = 4, "agent-b" })).To(gomega.BeFalse(), "a promotion goes at once")
	g.Expect(changed(func(s *v1alpha1.ExtendedDaemonSetStatus) { s.Canary = &v1alpha1.CanaryStatus{ReplicaSet: "agent-b"} })).To(gomega.BeFalse())
	g.Expect(changed(func(s *v1alpha1.ExtendedDaemonSetStatus) { s.Conditions[0].Status = metav1.ConditionTrue })).To(gomega.BeFalse())
	g.Expect(changed(func(s *v1alpha1.ExtendedDaemonSetStatus) { s.ObservedGeneration = 3 })).To(gomega.BeFalse())
	g.Expect(changed(func(s *v1alpha1.ExtendedDaemonSetStatus) { s.Desired, s.Current = 12, 11 })).To(gomega.BeFalse(),
		"a change of desired nodes goes at once")
	base.Domains = []v1alpha1.DomainStatus{{Name: "zone-a", State: v1alpha1.DomainUpdating, Desired: 5, UpToDate: 2, Unavailable: 1}}
	g.Expect(changed(func(s *v1alpha1.ExtendedDaemonSetStatus) { s.Domains[0].UpToDate, s.Domains[0].Unavailable = 3, 0 })).To(gomega.BeTrue(),
		"a domain's counts are counters")
	g.Expect(changed(func(s *v1alpha1.ExtendedDaemonSetStatus) { s.Domains[0].State = v1alpha1.DomainBaking })).To(gomega.BeFalse(),
		"a domain's state goes at once")
	g.Expect(changed(func(s *v1alpha1.ExtendedDaemonSetStatus) { s.Domains[0].Desired = 6 })).To(gomega.BeFalse(),
		"a domain's desired nodes go at once")
	base.Domains = nil
	g.Expect(changed(func(s *v1alpha1.ExtendedDaemonSetStatus) { s.Ready, s.Available, s.UpToDate = 10, 10, 10 })).To(gomega.BeFalse(),
		"the final figures go at once: a reader waits on them")
}

// The counters of a rollout (three objects) spend at most 1% of the
// client's request budget together, and each object's go out at least a
// second apart.
func TestCounterWriteInterval(t *testing.T) {
	g := gomega.NewWithT(t)
	g.Expect(CounterWriteInterval(20)).To(gomega.Equal(15 * time.Second))
	g.Expect(CounterWriteInterval(50)).To(gomega.Equal(6 * time.Second))
	g.Expect(CounterWriteInterval(300)).To(gomega.Equal(time.Second))
	g.Expect(CounterWriteInterval(1000)).To(gomega.Equal(time.Second))
	g.Expect(CounterWriteInterval(-1)).To(gomega.Equal(time.Second), "no client-side limit")
	g.Expect(CounterWriteInterval(0)).To(gomega.Equal(time.Second))

	var w StatusWrites
	key := types.NamespacedName{Namespace: "ns", Name: "agent"}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	g.Expect(w.hold(key, "1", true, now)).To(gomega.BeZero(), "never written")
	w.wrote(key, "1", now)
	g.Expect(w.hold(key, "2", true, now.Add(300*time.Millisecond))).To(gomega.Equal(700*time.Millisecond), "the default interval")
	g.Expect(w.hold(key, "2", false, now)).To(gomega.BeZero(), "more than counters")
	w.Interval = 5 * time.Second
	g.Expect(w.hold(key, "2", true, now.Add(time.Second))).To(gomega.Equal(4 * time.Second))
	w.Forget(key)
	g.Expect(w.hold(key, "2", true, now)).To(gomega.BeZero())
}

// A pass that read the version this process's last write replaced holds
// its write, whatever it changes: the cache has not seen that write yet,
// and the patch could only get a Conflict.
func TestStatusWriteWaitsForTheCacheToSeeTheLastOne(t *testing.T) {
	g := gomega.NewWithT(t)
	var w StatusWrites
	key := types.NamespacedName{Namespace: "ns", Name: "agent"}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w.wrote(key, "7", now)
	g.Expect(w.hold(key, "7", false, now.Add(time.Minute))).To(gomega.Equal(StaleReadRetry), "read the replaced version")
	g.Expect(w.hold(key, "8", false, now.Add(time.Millisecond))).To(gomega.BeZero(), "read the written version")
	g.Expect(w.hold(key, "9", false, now)).To(gomega.BeZero(), "read a version written since by another")
	g.Expect(w.hold(types.NamespacedName{Namespace: "ns", Name: "other"}, "7", false, now)).To(gomega.BeZero(), "another object")
}

// README states the counter write interval as CounterWriteInterval gives
// it: at the default QPS (50, fluxcd/pkg/runtime/client's), at QPS 20, and
// the QPS from which it is a second.
func TestREADMEStatesTheCounterWriteInterval(t *testing.T) {
	g := gomega.NewWithT(t)
	data, err := os.ReadFile("../../../README.md")
	g.Expect(err).NotTo(gomega.HaveOccurred())
	readme := strings.Join(strings.Fields(string(data)), " ")
	seconds := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s" }
	oneSecondFrom := countersPerRollout * 100
	g.Expect(CounterWriteInterval(float32(oneSecondFrom))).To(gomega.Equal(time.Second))
	g.Expect(CounterWriteInterval(float32(oneSecondFrom - 1))).To(gomega.BeNumerically(">", time.Second))
	g.Expect(readme).To(gomega.ContainSubstring(fmt.Sprintf(
		"every %s per object at the default QPS 50 and every %s at QPS 20, once a second from QPS %d up",
		seconds(CounterWriteInterval(50)), seconds(CounterWriteInterval(20)), oneSecondFrom)))
}
