package controllers

// Pure tests: run them with -short (TestMain starts envtest otherwise).

import (
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
)

// toldReasons runs tellTransitions over passes, each a status read, the
// status written and what the canary step did, and returns the reasons
// of the events told, in order.
func toldReasons(t *testing.T, passes []toldPass) []string {
	t.Helper()
	rec := events.NewFakeRecorder(100)
	r := &ExtendedDaemonSetReconciler{Recorder: rec}
	for _, p := range passes {
		r.tellTransitions(p.before, p.after, nil, p.note, benchNow)
	}
	close(rec.Events)
	var reasons []string
	for e := range rec.Events {
		reasons = append(reasons, strings.Fields(e)[1])
	}
	return reasons
}

type toldPass struct {
	before, after *v1alpha1.ExtendedDaemonSet
	note          *canaryNote
}

// One analysis failure is one AnalysisFailed event, however many status
// writes follow while the failed canary's nodes go back: each pass tells
// what changed between the status it read and the one it wrote.
func TestAnalysisVerdictIsToldOnce(t *testing.T) {
	g := gomega.NewWithT(t)
	c := benchCanary(10)
	started := metav1.NewTime(benchNow.Add(-5 * time.Minute))
	running := c.eds.DeepCopy()
	running.Status.Canary.StartedAt = &started
	failed := running.DeepCopy()
	failed.Status.Canary.Failed, failed.Status.Canary.Reason = true, v1alpha1.ReasonAnalysisFailed
	failed.Status.Canary.Analysis = &v1alpha1.AnalysisStatus{Phase: v1alpha1.AnalysisFailed, Message: "error rate 4.1% > 1%"}
	// What the canary step returns for a canary: its transition, if any,
	// and the canary as decided.
	stepped := func(transition string, after *v1alpha1.ExtendedDaemonSet) *canaryNote {
		return &canaryNote{replicaSet: c.current, transition: transition, canary: after.Status.Canary.DeepCopy()}
	}
	passes := []toldPass{{before: running, after: failed, note: stepped(canary.Failed, failed)}}
	for i := range 6 {
		// The failed canary's nodes go back: its counters move, and
		// each move is a status write.
		before, after := failed.DeepCopy(), failed.DeepCopy()
		before.Status.Available, after.Status.Available = int32(4+i), int32(5+i)
		passes = append(passes, toldPass{before: before, after: after, note: stepped("", after)})
	}
	g.Expect(toldReasons(t, passes)).To(gomega.Equal([]string{canary.Failed, v1alpha1.ReasonAnalysisFailed}))

	// A running analysis measured again, its phase unchanged, tells
	// nothing; its verdict is told once.
	remeasured := running.DeepCopy()
	remeasured.Status.Canary.Analysis.Message = "2 of 2 metrics successful"
	successful := running.DeepCopy()
	successful.Status.Canary.Analysis = &v1alpha1.AnalysisStatus{Phase: v1alpha1.AnalysisSuccessful}
	g.Expect(toldReasons(t, []toldPass{
		{before: running, after: remeasured, note: stepped("", remeasured)},
		{before: remeasured, after: successful, note: stepped("", successful)},
		{before: successful, after: successful, note: stepped("", successful)},
	})).To(gomega.Equal([]string{v1alpha1.ReasonAnalysisSuccessful}))

	// A retry starts a new canary of the same replica set: its analysis
	// is new, and told from the start.
	retried := running.DeepCopy()
	later := metav1.NewTime(benchNow)
	retried.Status.Canary.StartedAt, retried.Status.Canary.Analysis = &later, &v1alpha1.AnalysisStatus{Phase: v1alpha1.AnalysisFailed}
	g.Expect(toldReasons(t, []toldPass{{before: failed, after: retried, note: stepped("", retried)}})).
		To(gomega.Equal([]string{v1alpha1.ReasonAnalysisFailed}))
}
