package controllers

import (
	"errors"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/outcome"
	"github.com/extendeddaemonset/extendeddaemonset/test/argocd"
)

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
		{"waiting at a gate", v1alpha1.CanaryStatus{ReplicaSet: "rs", Reason: v1alpha1.ReasonWaitingForGate}, nil, outcome.Progressing, v1alpha1.ReasonWaitingForGate},
		{"a gate that timed out pauses", v1alpha1.CanaryStatus{ReplicaSet: "rs", Paused: true, Reason: v1alpha1.ReasonGateTimedOut}, nil, outcome.Progressing, v1alpha1.ReasonCanaryPaused},
		{"paused beats a stuck replica set", v1alpha1.CanaryStatus{ReplicaSet: "rs", Paused: true}, stalledSet, outcome.Progressing, v1alpha1.ReasonCanaryPaused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := canaryProgress(&tc.canary, tc.ers, "", "")
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
	kstatus, health, err := argocd.GitOpsHealth(eds)
	g.Expect(err).NotTo(gomega.HaveOccurred())
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
		{outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonWaitingForGate}, v1alpha1.StateCanary},
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
	kstatus, health, err := argocd.GitOpsHealth(eds)
	g.Expect(err).NotTo(gomega.HaveOccurred())
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
	kstatus, health, err = argocd.GitOpsHealth(eds)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(kstatus).To(gomega.Equal(status.FailedStatus))
	g.Expect(health).To(gomega.Equal("Degraded"))

	// A new template's replica set is not held by the old one's bake.
	eds = newEDS(v1alpha1.AnalysisFailed)
	eds.Status.Bake.ReplicaSet = "agent-1"
	setExtendedDaemonSetStatus(eds, obs, nil)
	g.Expect(conditions.IsStalled(eds)).To(gomega.BeFalse())
	g.Expect(conditions.Get(eds, v1alpha1.AnalysisCondition)).To(gomega.BeNil())
}

// Where an ExtendedDaemonSet stands, one row per situation, in the order of
// precedence extendedDaemonSetProgress states: an error of the pass, then
// replica sets not found, then a canary, then a failed bake, then the
// active replica set.
func TestExtendedDaemonSetProgress(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	replicaSet := func(name, reason string, phase outcome.Phase) *v1alpha1.ExtendedDaemonSetReplicaSet {
		ers := &v1alpha1.ExtendedDaemonSetReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1}}
		ers.Status.Status, ers.Status.ObservedGeneration = v1alpha1.ReplicaSetActive, 1
		outcome.Progress{Phase: phase, Reason: reason, Message: "as " + name + " says"}.Apply(ers)
		return ers
	}
	runningCanary := func(eds *v1alpha1.ExtendedDaemonSet, obs *edsObservation) {
		obs.current = replicaSet("agent-2", v1alpha1.ReasonRollingUpdate, outcome.Progressing)
		obs.current.Status.Status = v1alpha1.ReplicaSetCanary
		obs.sets = append(obs.sets, obs.current)
		eds.Status.Canary = &v1alpha1.CanaryStatus{ReplicaSet: "agent-2", Nodes: []string{"node-a"}, StartedAt: &metav1.Time{Time: now.Add(-time.Minute)}}
	}
	failedBake := func(eds *v1alpha1.ExtendedDaemonSet, _ *edsObservation) {
		eds.Status.Bake = &v1alpha1.DomainBakeStatus{ReplicaSet: "agent-1", Domain: "zone-b",
			Analysis: &v1alpha1.AnalysisStatus{Phase: v1alpha1.AnalysisFailed, Message: "error-rate: 0.4 > 0.05"}}
	}
	for _, tc := range []struct {
		name   string
		setup  func(*v1alpha1.ExtendedDaemonSet, *edsObservation)
		err    error
		phase  outcome.Phase
		reason string
	}{
		{name: "rolled out", phase: outcome.Done, reason: v1alpha1.ReasonRolledOut},
		{name: "a spec error comes first", setup: runningCanary, err: outcome.Stalling(errors.New("bad")),
			phase: outcome.Stalled, reason: v1alpha1.ReasonInvalidSpec},
		{name: "then any other error", setup: func(eds *v1alpha1.ExtendedDaemonSet, obs *edsObservation) {
			runningCanary(eds, obs)
			eds.Status.Canary.Failed = true
		}, err: errors.New("timeout"), phase: outcome.Progressing, reason: v1alpha1.ReasonReconcileFailed},
		{name: "then replica sets not found yet", setup: func(_ *v1alpha1.ExtendedDaemonSet, obs *edsObservation) { obs.current = nil },
			phase: outcome.Progressing, reason: v1alpha1.ReasonProgressing},
		{name: "then a running canary", setup: runningCanary, phase: outcome.Progressing, reason: v1alpha1.ReasonCanaryRunning},
		{name: "a paused canary", setup: func(eds *v1alpha1.ExtendedDaemonSet, obs *edsObservation) {
			runningCanary(eds, obs)
			eds.Status.Canary.Paused = true
		}, phase: outcome.Progressing, reason: v1alpha1.ReasonCanaryPaused},
		{name: "a failed canary", setup: func(eds *v1alpha1.ExtendedDaemonSet, obs *edsObservation) {
			runningCanary(eds, obs)
			eds.Status.Canary.Failed = true
		}, phase: outcome.Stalled, reason: v1alpha1.ReasonCanaryFailed},
		{name: "a canary whose pods are stuck past the deadline", setup: func(eds *v1alpha1.ExtendedDaemonSet, obs *edsObservation) {
			runningCanary(eds, obs)
			outcome.Progress{Phase: outcome.Stalled, Reason: v1alpha1.ReasonProgressDeadlineExceeded}.Apply(obs.current)
		}, phase: outcome.Stalled, reason: v1alpha1.ReasonProgressDeadlineExceeded},
		{name: "a canary without nodes past the deadline", setup: func(eds *v1alpha1.ExtendedDaemonSet, obs *edsObservation) {
			runningCanary(eds, obs)
			eds.Status.Canary.Reason, eds.Status.Canary.Nodes = canary.ReasonWaitingForNodes, nil
			eds.Status.Canary.StartedAt = &metav1.Time{Time: now.Add(-time.Hour)}
		}, phase: outcome.Stalled, reason: v1alpha1.ReasonProgressDeadlineExceeded},
		{name: "a canary beats a failed bake", setup: func(eds *v1alpha1.ExtendedDaemonSet, obs *edsObservation) {
			runningCanary(eds, obs)
			failedBake(eds, obs)
		}, phase: outcome.Progressing, reason: v1alpha1.ReasonCanaryRunning},
		{name: "then a failed bake", setup: failedBake, phase: outcome.Stalled, reason: v1alpha1.ReasonDomainBakeFailed},
		{name: "a failed bake of an older replica set is history", setup: func(eds *v1alpha1.ExtendedDaemonSet, obs *edsObservation) {
			failedBake(eds, obs)
			eds.Status.Bake.ReplicaSet = "agent-0"
		}, phase: outcome.Done, reason: v1alpha1.ReasonRolledOut},
		{name: "then the active replica set rolling out", setup: func(_ *v1alpha1.ExtendedDaemonSet, obs *edsObservation) {
			outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonRollingUpdate}.Apply(obs.current)
		}, phase: outcome.Progressing, reason: v1alpha1.ReasonRollingUpdate},
		{name: "a domain baking", setup: func(_ *v1alpha1.ExtendedDaemonSet, obs *edsObservation) {
			outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonDomainBaking}.Apply(obs.current)
		}, phase: outcome.Progressing, reason: v1alpha1.ReasonDomainBaking},
		{name: "the active replica set stalled", setup: func(_ *v1alpha1.ExtendedDaemonSet, obs *edsObservation) {
			outcome.Progress{Phase: outcome.Stalled, Reason: v1alpha1.ReasonProgressDeadlineExceeded}.Apply(obs.current)
		}, phase: outcome.Stalled, reason: v1alpha1.ReasonProgressDeadlineExceeded},
		{name: "the active replica set ready, but not of the current template", setup: func(_ *v1alpha1.ExtendedDaemonSet, obs *edsObservation) {
			obs.current = replicaSet("agent-2", v1alpha1.ReasonRollingUpdate, outcome.Progressing)
		}, phase: outcome.Progressing, reason: v1alpha1.ReasonRolledOut},
		{name: "the active replica set not seen", setup: func(eds *v1alpha1.ExtendedDaemonSet, _ *edsObservation) {
			eds.Status.ActiveReplicaSet = "agent-9"
		}, phase: outcome.Progressing, reason: v1alpha1.ReasonProgressing},
		{name: "the active replica set not yet taking over", setup: func(_ *v1alpha1.ExtendedDaemonSet, obs *edsObservation) {
			obs.current.Status.Status = v1alpha1.ReplicaSetUnknown
		}, phase: outcome.Progressing, reason: v1alpha1.ReasonProgressing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			active := replicaSet("agent-1", v1alpha1.ReasonRolledOut, outcome.Done)
			eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Generation: 2}}
			eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{}
			eds.Status.ActiveReplicaSet = active.Name
			obs := edsObservation{sets: []*v1alpha1.ExtendedDaemonSetReplicaSet{active}, current: active, now: now}
			if tc.setup != nil {
				tc.setup(eds, &obs)
			}
			p := extendedDaemonSetProgress(eds, obs, tc.err)
			g.Expect(p.Phase).To(gomega.Equal(tc.phase), "phase of %+v", p)
			g.Expect(p.Reason).To(gomega.Equal(tc.reason), "reason of %+v", p)
		})
	}
}
