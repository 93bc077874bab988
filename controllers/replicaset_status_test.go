package controllers

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/outcome"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

func TestReplicaSetProgress(t *testing.T) {
	active := func(change func(*observation)) *observation {
		o := &observation{role: v1alpha1.ReplicaSetActive}
		if change != nil {
			change(o)
		}
		return o
	}
	for _, tc := range []struct {
		name   string
		obs    *observation
		counts rollout.Counts
		actErr error
		phase  outcome.Phase
		reason string
	}{
		{"rolled out", active(nil), rollout.Counts{Desired: 2, Current: 2, UpToDate: 2}, nil, outcome.Done, v1alpha1.ReasonRolledOut},
		{"old pods left", active(nil), rollout.Counts{Desired: 2, Current: 1, UpToDate: 1, Old: 1}, nil, outcome.Progressing, v1alpha1.ReasonRollingUpdate},
		{"pods becoming available", active(nil), rollout.Counts{Desired: 2, Current: 2, UpToDate: 1}, nil, outcome.Progressing, v1alpha1.ReasonProgressing},
		{"paused", active(func(o *observation) { o.input.Params.Paused = true }), rollout.Counts{Desired: 1, Old: 1}, nil, outcome.Progressing, v1alpha1.ReasonRollingUpdatePaused},
		{"frozen", active(func(o *observation) { o.input.Params.Frozen = true }), rollout.Counts{Desired: 1}, nil, outcome.Progressing, v1alpha1.ReasonRolloutFrozen},
		{"waiting for the old DaemonSet", active(func(o *observation) { o.migrationWaiting = "delete it" }), rollout.Counts{Desired: 1, Old: 1}, nil, outcome.Progressing, v1alpha1.ReasonWaitingForOldDaemonSet},
		{"write refused", active(nil), rollout.Counts{Desired: 1}, errors.New("quota"), outcome.Progressing, v1alpha1.ReasonReconcileFailed},
		{"spec error", active(func(o *observation) { o.specErr = errors.New("bad") }), rollout.Counts{}, nil, outcome.Stalled, v1alpha1.ReasonInvalidSpec},
		{"no role", &observation{role: v1alpha1.ReplicaSetUnknown}, rollout.Counts{Current: 3}, nil, outcome.Idle, v1alpha1.ReasonInactive},
		{"a domain bakes", active(nil), rollout.Counts{Desired: 2, Current: 1, UpToDate: 1, Old: 1,
			Domains: []rollout.DomainCounts{{Name: "a", State: rollout.DomainBaking}, {Name: "b", State: rollout.DomainPending}}}, nil, outcome.Progressing, v1alpha1.ReasonDomainBaking},
		{"a domain waits for its gates", active(nil), rollout.Counts{Desired: 2, Current: 1, UpToDate: 1, Old: 1,
			Domains: []rollout.DomainCounts{{Name: "a", State: rollout.DomainDone}, {Name: "b", State: rollout.DomainPending}}}, nil, outcome.Progressing, v1alpha1.ReasonWaitingForGate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := replicaSetProgress(tc.obs, tc.counts, tc.actErr)
			if p.Phase != tc.phase || p.Reason != tc.reason {
				t.Fatalf("progress %d %s (%s), want %d %s", p.Phase, p.Reason, p.Message, tc.phase, tc.reason)
			}
			if strings.ContainsAny(p.Message, "0123456789") && tc.actErr == nil && tc.obs.specErr == nil {
				t.Errorf("message %q carries a counter: messages change with the reason only", p.Message)
			}
		})
	}
}

// The progress deadline stalls a replica set that waits on its pods, and
// only one: a paused rollout waits for a person, and a domain that bakes
// waits for its bake time and its analysis, not for its pods. The deadline
// starts when that wait does.
func TestSetReplicaSetStatusProgressDeadline(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	stuck := rollout.Plan{Counts: rollout.Counts{Desired: 1, Old: 1}}
	oldGone := rollout.Plan{Counts: rollout.Counts{Desired: 1}}
	baking := rollout.Plan{Counts: rollout.Counts{Desired: 1, Old: 1, Domains: []rollout.DomainCounts{
		{Name: "a", State: rollout.DomainBaking, BakingSince: now.Add(-time.Hour)}, {Name: "b", State: rollout.DomainPending, Desired: 1}}}}
	gated := rollout.Plan{Counts: rollout.Counts{Desired: 1, Old: 1, Domains: []rollout.DomainCounts{
		{Name: "a", State: rollout.DomainDone}, {Name: "b", State: rollout.DomainPending, Desired: 1}}}}
	for _, tc := range []struct {
		name          string
		plan          rollout.Plan
		lastProgress  time.Duration
		paused        bool
		wasWaiting    bool
		wantStalled   bool
		wantRequeueIn time.Duration
	}{
		{"within the deadline", stuck, 30 * time.Second, false, true, false, 31 * time.Second},
		{"past the deadline", stuck, 2 * time.Minute, false, true, true, 0},
		{"an old pod gone is progress", oldGone, 2 * time.Minute, false, true, false, 61 * time.Second},
		{"paused by a person", stuck, 2 * time.Minute, true, true, false, 0},
		{"resumed after a pause longer than the deadline", stuck, 2 * time.Minute, false, false, false, 61 * time.Second},
		{"a domain baking longer than the deadline", baking, 2 * time.Minute, false, true, false, 0},
		{"a domain waiting for its gates longer than the deadline", gated, 2 * time.Minute, false, true, false, 0},
		{"the next domain after a bake longer than the deadline", stuck, 2 * time.Minute, false, false, false, 61 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			ers := &v1alpha1.ExtendedDaemonSetReplicaSet{}
			ers.Status = v1alpha1.ExtendedDaemonSetReplicaSetStatus{Status: v1alpha1.ReplicaSetActive, Desired: 1,
				ActiveSince: &metav1.Time{Time: now.Add(-time.Hour)}, LastProgressTime: &metav1.Time{Time: now.Add(-tc.lastProgress)}}
			if tc.wasWaiting {
				ers.Status.ProgressMark = &v1alpha1.ProgressMark{Old: 1}
			}
			obs := &observation{role: v1alpha1.ReplicaSetActive, deadline: time.Minute,
				input: rollout.Input{Nodes: []rollout.Node{{Name: "a", ShouldRun: true, ShouldContinueRunning: true}},
					Pods: map[string][]rollout.Pod{"a": {{Name: "old", Node: "a", Terminating: true}}}}}
			obs.input.Params.Paused = tc.paused
			requeue := setReplicaSetStatus(ers, obs, tc.plan, nil, now)
			g.Expect(conditions.IsStalled(ers)).To(gomega.Equal(tc.wantStalled))
			g.Expect(requeue).To(gomega.Equal(tc.wantRequeueIn))
			if tc.wantStalled {
				g.Expect(conditions.GetReason(ers, v1alpha1.StalledCondition)).To(gomega.Equal(v1alpha1.ReasonProgressDeadlineExceeded))
				g.Expect(conditions.GetMessage(ers, v1alpha1.StalledCondition)).To(gomega.ContainSubstring("a (pod old terminating)"))
			}
		})
	}
}

func TestDeadlineMessageNamesStuckNodesAndBoundsThem(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	obs := &observation{deadline: 10 * time.Minute, pods: map[string]*corev1.Pod{},
		input: rollout.Input{Pods: map[string][]rollout.Pod{}, Now: now}}
	for i := range 8 {
		name := string(rune('a' + i))
		obs.input.Nodes = append(obs.input.Nodes, rollout.Node{Name: name, ShouldRun: true, ShouldContinueRunning: true})
		obs.input.Pods[name] = []rollout.Pod{{Name: "p-" + name, Node: name, New: true}}
		obs.pods["p-"+name] = &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
			{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}}}
	}
	obs.input.Nodes = append(obs.input.Nodes, rollout.Node{Name: "ok", ShouldRun: true, ShouldContinueRunning: true})
	obs.input.Pods["ok"] = []rollout.Pod{{Name: "p-ok", Node: "ok", New: true, ReadySince: now.Add(-time.Hour)}}
	got := deadlineMessage(obs, errors.New("pods is forbidden"))
	want := "no progress for 10m0s: nodes without an available pod: a (pod p-a not ready: CrashLoopBackOff), " +
		"b (pod p-b not ready: CrashLoopBackOff), c (pod p-c not ready: CrashLoopBackOff), " +
		"d (pod p-d not ready: CrashLoopBackOff), e (pod p-e not ready: CrashLoopBackOff) and 3 more; last error: pods is forbidden"
	if got != want {
		t.Fatalf("deadlineMessage =\n%s\nwant\n%s", got, want)
	}
}

// A node in maintenance is left out of the counters, its agent with it,
// and counted in nodesInMaintenance; a rollout done everywhere else is
// rolled out, and the ExtendedDaemonSet sums the count.
func TestNodesInMaintenanceInTheStatus(t *testing.T) {
	g := gomega.NewWithT(t)
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	ready := now.Add(-time.Hour)
	obs := &observation{role: v1alpha1.ReplicaSetActive, deadline: time.Minute, input: rollout.Input{Now: now,
		Nodes: []rollout.Node{
			{Name: "a", ShouldRun: true, ShouldContinueRunning: true},
			{Name: "b", ShouldRun: true, ShouldContinueRunning: true, Maintenance: true},
		},
		Pods: map[string][]rollout.Pod{
			"a": {{Name: "new-a", Node: "a", New: true, ReadySince: ready}},
			"b": {{Name: "old-b", Node: "b", ReadySince: ready}},
		}}}
	ers := &v1alpha1.ExtendedDaemonSetReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "agent-2"}}
	setReplicaSetStatus(ers, obs, rollout.Compute(obs.input), nil, now)
	g.Expect(ers.Status.NodesInMaintenance).To(gomega.BeEquivalentTo(1))
	g.Expect([]int32{ers.Status.Desired, ers.Status.Current, ers.Status.Available, ers.Status.UpToDate}).To(gomega.Equal([]int32{1, 1, 1, 1}))
	g.Expect(conditions.IsReady(ers)).To(gomega.BeTrue(), "rolled out on every node not in maintenance")

	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent"}}
	eds.Status.ActiveReplicaSet = "agent-2"
	canary := &v1alpha1.ExtendedDaemonSetReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "agent-3"}}
	canary.Status.NodesInMaintenance = 2
	eds.Status.Canary = &v1alpha1.CanaryStatus{ReplicaSet: "agent-3"}
	sumReplicaSets(eds, []*v1alpha1.ExtendedDaemonSetReplicaSet{ers, canary}, ers)
	g.Expect(eds.Status.NodesInMaintenance).To(gomega.BeEquivalentTo(3))
}
