package bake

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(d)} }

// zones are domains a, b and c of a rollout, b baking since a minute ago.
func zones() []v1alpha1.DomainStatus {
	return []v1alpha1.DomainStatus{
		{Name: "a", State: v1alpha1.DomainDone},
		{Name: "b", State: v1alpha1.DomainBaking, BakingSince: at(-time.Minute)},
		{Name: "c", State: v1alpha1.DomainPending},
	}
}

func judged(domain string, phase v1alpha1.AnalysisPhase, passedThrough string) *v1alpha1.DomainBakeStatus {
	st := &v1alpha1.DomainBakeStatus{ReplicaSet: "rs-2", Domain: domain, StartedAt: *at(-time.Minute), PassedThrough: passedThrough}
	if phase != "" {
		st.Analysis = &v1alpha1.AnalysisStatus{Phase: phase, Message: "error-rate: 0.5 > 0.1"}
	}
	return st
}

func TestStep(t *testing.T) {
	spec := &v1alpha1.CanaryAnalysis{}
	for _, tc := range []struct {
		name        string
		in          Input
		want        *v1alpha1.DomainBakeStatus
		measure     bool
		retried     bool
		lastHandled string
	}{
		{
			name: "not judged: nothing recorded",
			in:   Input{ReplicaSet: "rs-2", Domains: zones(), Status: judged("b", "", ""), Now: now},
		},
		{
			name:    "a domain starts baking: its analysis starts with its bake",
			in:      Input{Analysis: spec, ReplicaSet: "rs-2", Domains: zones(), Status: judged("a", v1alpha1.AnalysisSuccessful, "a"), Now: now},
			want:    &v1alpha1.DomainBakeStatus{ReplicaSet: "rs-2", Domain: "b", StartedAt: *at(-time.Minute), PassedThrough: "a"},
			measure: true,
		},
		{
			name:    "the baking domain's analysis goes on",
			in:      Input{Analysis: spec, ReplicaSet: "rs-2", Domains: zones(), Status: judged("b", v1alpha1.AnalysisRunning, "a"), Now: now},
			want:    judged("b", v1alpha1.AnalysisRunning, "a"),
			measure: true,
		},
		{
			name: "passed: measured no more",
			in:   Input{Analysis: spec, ReplicaSet: "rs-2", Domains: zones(), Status: judged("b", v1alpha1.AnalysisSuccessful, "b"), Now: now},
			want: judged("b", v1alpha1.AnalysisSuccessful, "b"),
		},
		{
			name: "nothing bakes: the verdict is kept, measured no more",
			in:   Input{Analysis: spec, ReplicaSet: "rs-2", Status: judged("b", v1alpha1.AnalysisRunning, "a"), Now: now},
			want: judged("b", v1alpha1.AnalysisRunning, "a"),
		},
		{
			name:    "another replica set's bake is forgotten",
			in:      Input{Analysis: spec, ReplicaSet: "rs-3", Domains: zones(), Status: judged("b", v1alpha1.AnalysisFailed, "a"), Now: now},
			want:    &v1alpha1.DomainBakeStatus{ReplicaSet: "rs-3", Domain: "b", StartedAt: *at(-time.Minute)},
			measure: true,
		},
		{
			name: "failed: halted, measured no more, whatever bakes",
			in:   Input{Analysis: spec, ReplicaSet: "rs-2", Domains: zones()[2:], Status: judged("b", v1alpha1.AnalysisFailed, "a"), Now: now},
			want: judged("b", v1alpha1.AnalysisFailed, "a"),
		},
		{
			name:        "a token handled before is no retry",
			in:          Input{Analysis: spec, ReplicaSet: "rs-2", Domains: zones(), Status: judged("b", v1alpha1.AnalysisError, "a"), RetryToken: "/1", LastHandledRetry: "/1", Now: now},
			want:        judged("b", v1alpha1.AnalysisError, "a"),
			lastHandled: "/1",
		},
		{
			name:        "a retry clears a failure: the analysis starts over from now",
			in:          Input{Analysis: spec, ReplicaSet: "rs-2", Domains: zones(), Status: judged("b", v1alpha1.AnalysisInconclusive, "a"), RetryToken: "/2", LastHandledRetry: "/1", Now: now},
			want:        &v1alpha1.DomainBakeStatus{ReplicaSet: "rs-2", Domain: "b", StartedAt: metav1.NewTime(now), PassedThrough: "a"},
			measure:     true,
			retried:     true,
			lastHandled: "/2",
		},
		{
			name:        "a retry seen while nothing failed is handled, and changes nothing",
			in:          Input{Analysis: spec, ReplicaSet: "rs-2", Domains: zones(), Status: judged("b", v1alpha1.AnalysisRunning, "a"), RetryToken: "/2", Now: now},
			want:        judged("b", v1alpha1.AnalysisRunning, "a"),
			measure:     true,
			lastHandled: "/2",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			before := tc.in.Status.DeepCopy()
			d := Step(tc.in)
			g.Expect(d.Status).To(gomega.Equal(tc.want))
			g.Expect(d.Measure).To(gomega.Equal(tc.measure), "measure")
			g.Expect(d.Retried).To(gomega.Equal(tc.retried), "retried")
			g.Expect(d.LastHandledRetry).To(gomega.Equal(tc.lastHandled), "last handled retry")
			g.Expect(tc.in.Status).To(gomega.Equal(before), "the input was modified")
		})
	}
}

// A bake passes once its analysis is Successful and its time is over, not
// before either.
func TestSettle(t *testing.T) {
	g := gomega.NewWithT(t)
	st := judged("b", v1alpha1.AnalysisSuccessful, "a")
	g.Expect(Settle(st, now.Add(-time.Minute), 5*time.Minute, now)).To(gomega.Equal(4 * time.Minute))
	g.Expect(st.PassedThrough).To(gomega.Equal("a"))
	g.Expect(Settle(st, now.Add(-time.Minute), time.Minute, now)).To(gomega.BeZero())
	g.Expect(st.PassedThrough).To(gomega.Equal("b"))

	for _, phase := range []v1alpha1.AnalysisPhase{"", v1alpha1.AnalysisPending, v1alpha1.AnalysisRunning, v1alpha1.AnalysisFailed,
		v1alpha1.AnalysisError, v1alpha1.AnalysisInconclusive} {
		st := judged("b", phase, "a")
		g.Expect(Settle(st, now.Add(-time.Hour), time.Minute, now)).To(gomega.BeZero())
		g.Expect(st.PassedThrough).To(gomega.Equal("a"), "passed on %q", phase)
	}
	g.Expect(Settle(nil, now, time.Minute, now)).To(gomega.BeZero())
}

func TestPassedFollowsTheRolloutOrder(t *testing.T) {
	g := gomega.NewWithT(t)
	st := judged("b", v1alpha1.AnalysisSuccessful, "b")
	g.Expect(Passed(st, "a")).To(gomega.BeTrue())
	g.Expect(Passed(st, "b")).To(gomega.BeTrue())
	g.Expect(Passed(st, "c")).To(gomega.BeFalse())
	g.Expect(Passed(st, "(none)")).To(gomega.BeFalse(), "the nodes without the key come last")
	g.Expect(Passed(judged("b", "", ""), "a")).To(gomega.BeFalse())
	g.Expect(Passed(nil, "a")).To(gomega.BeFalse())
	g.Expect(PassedThrough(st, "rs-2")).To(gomega.Equal("b"))
	g.Expect(PassedThrough(st, "rs-3")).To(gomega.BeEmpty())
}

func TestVerdicts(t *testing.T) {
	g := gomega.NewWithT(t)
	out := Verdicts(zones(), judged("b", v1alpha1.AnalysisRunning, "a"))
	g.Expect([]v1alpha1.AnalysisPhase{out[0].Analysis, out[1].Analysis, out[2].Analysis}).To(gomega.Equal(
		[]v1alpha1.AnalysisPhase{v1alpha1.AnalysisSuccessful, v1alpha1.AnalysisRunning, ""}))
	out = Verdicts(zones(), judged("b", "", "a"))
	g.Expect(out[1].Analysis).To(gomega.Equal(v1alpha1.AnalysisPending))
	g.Expect(Verdicts(zones(), nil)).To(gomega.Equal(zones()))
	g.Expect(Verdicts(nil, nil)).To(gomega.BeNil())
}

// The message names the domain, the time left in whole minutes and the
// verdict, and says when it changes by time alone.
func TestMessage(t *testing.T) {
	g := gomega.NewWithT(t)
	msg, next := Message(zones(), judged("b", v1alpha1.AnalysisRunning, "a"), 3*time.Minute+30*time.Second, now)
	g.Expect(msg).To(gomega.Equal("baking b: 3m left, analysis Running"))
	g.Expect(next).To(gomega.Equal(30 * time.Second))
	msg, _ = Message(zones(), judged("b", v1alpha1.AnalysisRunning, "a"), 3*time.Minute+50*time.Second, now.Add(10*time.Second))
	g.Expect(msg).To(gomega.Equal("baking b: 3m left, analysis Running"), "the same within a minute")
	msg, next = Message(zones(), judged("b", v1alpha1.AnalysisRunning, "a"), time.Minute, now)
	g.Expect(msg).To(gomega.Equal("baking b: bake time over, analysis Running"))
	g.Expect(next).To(gomega.BeZero())
	msg, _ = Message(zones(), judged("b", "", "a"), 2*time.Minute, now)
	g.Expect(msg).To(gomega.Equal("baking b: 1m left, analysis Pending"))
	msg, _ = Message(zones(), nil, 2*time.Minute, now)
	g.Expect(msg).To(gomega.Equal("baking b: 1m left"), "not judged")
	msg, _ = Message(zones()[:1], nil, time.Minute, now)
	g.Expect(msg).To(gomega.BeEmpty())
	g.Expect(FailedMessage(judged("b", v1alpha1.AnalysisFailed, "a"))).To(gomega.Equal(
		"the bake analysis of domain b is Failed: error-rate: 0.5 > 0.1; no further domain starts and nothing is rolled back " +
			"until the template changes or a retry is asked for"))
}

func TestAnalysisOf(t *testing.T) {
	g := gomega.NewWithT(t)
	eds := &v1alpha1.ExtendedDaemonSet{}
	g.Expect(AnalysisOf(eds)).To(gomega.BeNil())
	spec := &v1alpha1.CanaryAnalysis{}
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{Analysis: spec}
	eds.Spec.Strategy.RollingUpdate.Topology = &v1alpha1.RollingUpdateTopology{Key: "zone"}
	g.Expect(AnalysisOf(eds)).To(gomega.BeNil(), "no bake time")
	eds.Spec.Strategy.RollingUpdate.Topology.DomainBakeTime = &metav1.Duration{Duration: time.Minute}
	g.Expect(AnalysisOf(eds)).To(gomega.BeIdenticalTo(spec))
	eds.Spec.Strategy.RollingUpdate.Topology.Order = v1alpha1.TopologyParallel
	g.Expect(AnalysisOf(eds)).To(gomega.BeNil(), "parallel")
}

// A bake's nodeHealth regression halts the rollout whether onRegression is
// Fail or Pause: a failed bake rolls nothing back and waits for a retry or
// a new template, the pause that Pause asks for.
func TestANodeHealthRegressionHaltsTheBake(t *testing.T) {
	for _, action := range []v1alpha1.NodeHealthAction{v1alpha1.NodeHealthFail, v1alpha1.NodeHealthPause} {
		g := gomega.NewWithT(t)
		spec := &v1alpha1.CanaryAnalysis{Metrics: []v1alpha1.AnalysisMetric{
			{Name: "node-health", NodeHealth: &v1alpha1.NodeHealthMetric{OnRegression: action}},
		}}
		st := judged("b", v1alpha1.AnalysisFailed, "a")
		st.Analysis.Metrics = []v1alpha1.MetricResult{{Name: "node-health", Phase: v1alpha1.AnalysisFailed}}
		d := Step(Input{Analysis: spec, ReplicaSet: "rs-2", Domains: zones(), Status: st, Now: now})
		g.Expect(Failed(d.Status)).To(gomega.BeTrue(), "onRegression %s", action)
		g.Expect(d.Measure).To(gomega.BeFalse(), "onRegression %s: measured no more", action)
		g.Expect(FailedMessage(d.Status)).To(gomega.ContainSubstring("nothing is rolled back until the template changes or a retry is asked for"))
	}
}
