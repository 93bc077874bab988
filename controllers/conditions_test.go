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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/outcome"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
	"github.com/extendeddaemonset/extendeddaemonset/test/argocd"
)

// healthOf is what kstatus and the shipped Argo CD health check make of an
// ExtendedDaemonSet.
func healthOf(g gomega.Gomega, eds *v1alpha1.ExtendedDaemonSet) (status.Status, string) {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(eds)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	u := &unstructured.Unstructured{Object: raw}
	u.SetAPIVersion(v1alpha1.GroupVersion.String())
	u.SetKind("ExtendedDaemonSet")
	res, err := status.Compute(u)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	health, _, err := argocd.Health(u)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return res.Status, health
}

// Every row of the condition contract, from the progress a status function
// decides to what Flux and Argo CD show.
func TestConditionContract(t *testing.T) {
	for _, tc := range []struct {
		name     string
		progress outcome.Progress
		kstatus  status.Status
		argocd   string
	}{
		{"rolled out", outcome.Progress{Phase: outcome.Done, Reason: v1alpha1.ReasonRolledOut}, status.CurrentStatus, "Healthy"},
		{"rolling update", outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonRollingUpdate}, status.InProgressStatus, "Progressing"},
		{"canary running", outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonCanaryRunning}, status.InProgressStatus, "Progressing"},
		{"canary paused", outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonCanaryPaused}, status.InProgressStatus, "Suspended"},
		{"canary failed", outcome.Progress{Phase: outcome.Stalled, Reason: v1alpha1.ReasonCanaryFailed}, status.FailedStatus, "Degraded"},
		{"invalid spec", outcome.Progress{Phase: outcome.Stalled, Reason: v1alpha1.ReasonInvalidSpec}, status.FailedStatus, "Degraded"},
		{"past the deadline", outcome.Progress{Phase: outcome.Stalled, Reason: v1alpha1.ReasonProgressDeadlineExceeded}, status.FailedStatus, "Degraded"},
		{"domain baking", outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonDomainBaking}, status.InProgressStatus, "Progressing"},
		{"domain bake failed", outcome.Progress{Phase: outcome.Stalled, Reason: v1alpha1.ReasonDomainBakeFailed}, status.FailedStatus, "Degraded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Generation: 2}}
			eds.Status.ObservedGeneration = 2
			tc.progress.Message = "because"
			tc.progress.Apply(eds)
			kstatus, health := healthOf(g, eds)
			g.Expect(kstatus).To(gomega.Equal(tc.kstatus))
			g.Expect(health).To(gomega.Equal(tc.argocd))
		})
	}
	t.Run("not yet observed", func(t *testing.T) {
		g := gomega.NewWithT(t)
		eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Generation: 3}}
		eds.Status.ObservedGeneration = 2
		outcome.Progress{Phase: outcome.Done, Reason: v1alpha1.ReasonRolledOut}.Apply(eds)
		kstatus, health := healthOf(g, eds)
		g.Expect(kstatus).To(gomega.Equal(status.InProgressStatus))
		g.Expect(health).To(gomega.Equal("Progressing"))
	})
}

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

func TestCanaryProgress(t *testing.T) {
	stalledSet := &v1alpha1.ExtendedDaemonSetReplicaSet{}
	conditions.MarkStalled(stalledSet, v1alpha1.ReasonProgressDeadlineExceeded, "no progress for 10m0s")
	for _, tc := range []struct {
		name   string
		canary v1alpha1.CanaryStatus
		ers    *v1alpha1.ExtendedDaemonSetReplicaSet
		phase  outcome.Phase
		reason string
	}{
		{"running", v1alpha1.CanaryStatus{ReplicaSet: "rs"}, nil, outcome.Progressing, v1alpha1.ReasonCanaryRunning},
		{"paused", v1alpha1.CanaryStatus{ReplicaSet: "rs", Paused: true}, nil, outcome.Progressing, v1alpha1.ReasonCanaryPaused},
		{"failed", v1alpha1.CanaryStatus{ReplicaSet: "rs", Failed: true}, stalledSet, outcome.Stalled, v1alpha1.ReasonCanaryFailed},
		{"pods stuck past the deadline", v1alpha1.CanaryStatus{ReplicaSet: "rs"}, stalledSet, outcome.Stalled, v1alpha1.ReasonProgressDeadlineExceeded},
		{"paused beats a stuck replica set", v1alpha1.CanaryStatus{ReplicaSet: "rs", Paused: true}, stalledSet, outcome.Progressing, v1alpha1.ReasonCanaryPaused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := canaryProgress(&tc.canary, tc.ers, "")
			if p.Phase != tc.phase || p.Reason != tc.reason {
				t.Fatalf("progress %d %s (%s), want %d %s", p.Phase, p.Reason, p.Message, tc.phase, tc.reason)
			}
		})
	}
}

// A canary that finds no node to run on is subject to the progress
// deadline, as a rollout whose pods do not come is: past it, the
// ExtendedDaemonSet is Stalled, and says why.
func TestSetExtendedDaemonSetStatusCanaryWithoutNodesPastTheDeadline(t *testing.T) {
	g := gomega.NewWithT(t)
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	active := &v1alpha1.ExtendedDaemonSetReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "agent-1", Generation: 1}}
	current := &v1alpha1.ExtendedDaemonSetReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "agent-2", Generation: 1}}
	newEDS := func(waited time.Duration) *v1alpha1.ExtendedDaemonSet {
		eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Generation: 2}}
		eds.Spec.ProgressDeadlineSeconds = ptr.To[int32](600)
		eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{}
		eds.Status.ActiveReplicaSet = active.Name
		eds.Status.Canary = &v1alpha1.CanaryStatus{ReplicaSet: current.Name, StartedAt: &metav1.Time{Time: now.Add(-waited)},
			Reason: "WaitingForNodes", Message: "none of the 3 nodes the template runs on matches the canary nodeSelector"}
		return eds
	}
	obs := edsObservation{sets: []*v1alpha1.ExtendedDaemonSetReplicaSet{active, current}, current: current, now: now}

	eds := newEDS(9 * time.Minute)
	setExtendedDaemonSetStatus(eds, obs, nil)
	g.Expect(conditions.IsStalled(eds)).To(gomega.BeFalse())
	g.Expect(conditions.GetReason(eds, v1alpha1.ReconcilingCondition)).To(gomega.Equal(v1alpha1.ReasonCanaryRunning))

	eds = newEDS(11 * time.Minute)
	setExtendedDaemonSetStatus(eds, obs, nil)
	g.Expect(conditions.Get(eds, v1alpha1.StalledCondition)).To(gomega.And(
		gomega.HaveField("Status", metav1.ConditionTrue), gomega.HaveField("Reason", v1alpha1.ReasonProgressDeadlineExceeded),
		gomega.HaveField("Message", gomega.ContainSubstring("matches the canary nodeSelector"))))
	g.Expect(eds.Status.State).To(gomega.Equal(v1alpha1.StateError))
	kstatus, health := healthOf(g, eds)
	g.Expect(kstatus).To(gomega.Equal(status.FailedStatus))
	g.Expect(health).To(gomega.Equal("Degraded"))
}

// Whatever the error, the status says it: a spec error stalls, another
// keeps the object progressing with the error as reason, and only a
// successful or stalled reconcile observes the generation.
func TestSetExtendedDaemonSetStatusOnErrors(t *testing.T) {
	for _, tc := range []struct {
		name          string
		err           error
		reason        string
		stalled       bool
		observedMoves bool
	}{
		{"spec error", outcome.Stalling(errors.New("spec.strategy.canary.nodeSelector: bad")), v1alpha1.ReasonInvalidSpec, true, true},
		{"transient error", errors.New("listing nodes: timeout"), v1alpha1.ReasonReconcileFailed, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Generation: 4}}
			eds.Status.ObservedGeneration = 3
			setExtendedDaemonSetStatus(eds, edsObservation{}, tc.err)
			g.Expect(conditions.GetReason(eds, v1alpha1.ReadyCondition)).To(gomega.Equal(tc.reason))
			g.Expect(conditions.GetMessage(eds, v1alpha1.ReadyCondition)).To(gomega.Equal(tc.err.Error()))
			g.Expect(conditions.IsStalled(eds)).To(gomega.Equal(tc.stalled))
			g.Expect(eds.Status.ObservedGeneration == 4).To(gomega.Equal(tc.observedMoves))
		})
	}
}

func TestStateOf(t *testing.T) {
	for _, tc := range []struct {
		progress outcome.Progress
		want     v1alpha1.ExtendedDaemonSetState
	}{
		{outcome.Progress{Phase: outcome.Done}, v1alpha1.StateRunning},
		{outcome.Progress{Phase: outcome.Stalled, Reason: v1alpha1.ReasonCanaryFailed}, v1alpha1.StateCanaryFailed},
		{outcome.Progress{Phase: outcome.Stalled, Reason: v1alpha1.ReasonProgressDeadlineExceeded}, v1alpha1.StateError},
		{outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonRolloutFrozen}, v1alpha1.StateFrozen},
		{outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonCanaryPaused}, v1alpha1.StateCanaryPaused},
		{outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonCanaryRunning}, v1alpha1.StateCanary},
		{outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonRollingUpdate}, v1alpha1.StateRollingUpdate},
	} {
		if got := stateOf(tc.progress); got != tc.want {
			t.Errorf("stateOf(%+v) = %s, want %s", tc.progress, got, tc.want)
		}
	}
}

// A domain that bakes shows in Ready and Reconciling with its time left and
// its verdict; a failed bake stalls the ExtendedDaemonSet, naming the
// domain and the metric, and the Analysis condition says why.
func TestSetExtendedDaemonSetStatusWhileBaking(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	active := &v1alpha1.ExtendedDaemonSetReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "agent-2", Generation: 1}}
	active.Status = v1alpha1.ExtendedDaemonSetReplicaSetStatus{Status: v1alpha1.ReplicaSetActive, ObservedGeneration: 1, Desired: 6, Current: 6, UpToDate: 4}
	outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonDomainBaking, Message: "rolling update: domain zone-b bakes before the next one starts"}.Apply(active)
	newEDS := func(phase v1alpha1.AnalysisPhase) *v1alpha1.ExtendedDaemonSet {
		eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Generation: 2}}
		eds.Spec.Strategy.RollingUpdate.Topology = &v1alpha1.RollingUpdateTopology{Key: zoneLabel, DomainBakeTime: &metav1.Duration{Duration: 5 * time.Minute}}
		eds.Status.ActiveReplicaSet = active.Name
		eds.Status.Domains = []v1alpha1.DomainStatus{
			{Name: "zone-a", State: v1alpha1.DomainDone, Analysis: v1alpha1.AnalysisSuccessful},
			{Name: "zone-b", State: v1alpha1.DomainBaking, BakingSince: &metav1.Time{Time: now.Add(-150 * time.Second)}, Analysis: phase},
			{Name: "zone-c", State: v1alpha1.DomainPending},
		}
		eds.Status.Bake = &v1alpha1.DomainBakeStatus{ReplicaSet: active.Name, Domain: "zone-b", PassedThrough: "zone-a",
			Analysis: &v1alpha1.AnalysisStatus{Phase: phase, Message: "error-rate: 0.4 > 0.05 (2 of 2 measurements failed, failureLimit 1)"}}
		return eds
	}
	obs := edsObservation{sets: []*v1alpha1.ExtendedDaemonSetReplicaSet{active}, current: active, now: now}

	g := gomega.NewWithT(t)
	eds := newEDS(v1alpha1.AnalysisRunning)
	setExtendedDaemonSetStatus(eds, obs, nil)
	g.Expect(conditions.Get(eds, v1alpha1.ReadyCondition)).To(gomega.And(
		gomega.HaveField("Status", metav1.ConditionFalse), gomega.HaveField("Reason", v1alpha1.ReasonDomainBaking),
		gomega.HaveField("Message", "baking zone-b: 3m left, analysis Running")))
	g.Expect(conditions.GetMessage(eds, v1alpha1.ReconcilingCondition)).To(gomega.Equal("baking zone-b: 3m left, analysis Running"))
	g.Expect(conditions.Get(eds, v1alpha1.AnalysisCondition)).To(gomega.And(
		gomega.HaveField("Status", metav1.ConditionUnknown), gomega.HaveField("Reason", v1alpha1.ReasonAnalysisRunning),
		gomega.HaveField("Message", gomega.HavePrefix("bake of domain zone-b: "))))
	kstatus, health := healthOf(g, eds)
	g.Expect(kstatus).To(gomega.Equal(status.InProgressStatus))
	g.Expect(health).To(gomega.Equal("Progressing"))

	eds = newEDS(v1alpha1.AnalysisFailed)
	setExtendedDaemonSetStatus(eds, obs, nil)
	g.Expect(conditions.Get(eds, v1alpha1.StalledCondition)).To(gomega.And(
		gomega.HaveField("Status", metav1.ConditionTrue), gomega.HaveField("Reason", v1alpha1.ReasonDomainBakeFailed),
		gomega.HaveField("Message", gomega.And(gomega.ContainSubstring("domain zone-b"), gomega.ContainSubstring("error-rate")))))
	g.Expect(conditions.IsReady(eds)).To(gomega.BeFalse())
	g.Expect(conditions.GetReason(eds, v1alpha1.AnalysisCondition)).To(gomega.Equal(v1alpha1.ReasonAnalysisFailed))
	g.Expect(eds.Status.State).To(gomega.Equal(v1alpha1.StateError))
	kstatus, health = healthOf(g, eds)
	g.Expect(kstatus).To(gomega.Equal(status.FailedStatus))
	g.Expect(health).To(gomega.Equal("Degraded"))

	// A new template's replica set is not held by the old one's bake.
	eds = newEDS(v1alpha1.AnalysisFailed)
	eds.Status.Bake.ReplicaSet = "agent-1"
	setExtendedDaemonSetStatus(eds, obs, nil)
	g.Expect(conditions.IsStalled(eds)).To(gomega.BeFalse())
	g.Expect(conditions.Get(eds, v1alpha1.AnalysisCondition)).To(gomega.BeNil())
}
