package inspect

import (
	"bytes"
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// A canary at its gates shows which one waits, since when and its last
// answer, and which passed.
func TestReportShowsTheGates(t *testing.T) {
	g := gomega.NewWithT(t)
	now := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns"}}
	eds.Status.ActiveReplicaSet = "agent-a"
	eds.Status.Canary = &v1alpha1.CanaryStatus{ReplicaSet: "agent-b", Reason: v1alpha1.ReasonWaitingForGate,
		Message: "waiting for gate window (confirm-step) before step 2 since 2026-01-01T00:50:00Z",
		Gates: []v1alpha1.CanaryGateStatus{
			{Name: "ticket", Type: v1alpha1.WebhookConfirmStart, Since: metav1.NewTime(now.Add(-time.Hour)), PassedAt: &metav1.Time{Time: now.Add(-58 * time.Minute)}},
			{Name: "window", Type: v1alpha1.WebhookConfirmStep, Step: 2, Since: metav1.NewTime(now.Add(-10 * time.Minute)), LastAnswer: "answered 503"},
		}}
	s := &snapshot{eds: eds, now: now}

	var out bytes.Buffer
	g.Expect(writeReport(&out, s, false)).To(gomega.Succeed())
	g.Expect(out.String()).To(gomega.ContainSubstring("Canary:       running: WaitingForGate: waiting for gate window (confirm-step) before step 2 since"))
	g.Expect(out.String()).To(gomega.MatchRegexp(`ticket\s+confirm-start\s+-\s+passed after 2m\s+<none>\n`))
	g.Expect(out.String()).To(gomega.MatchRegexp(`window\s+confirm-step\s+2\s+waiting for 10m\s+answered 503\n`))
}

// Without a canary, the gates before the domain the rolling update stands
// at show which one waits, since when and its last answer.
func TestReportShowsTheGatesBeforeADomain(t *testing.T) {
	g := gomega.NewWithT(t)
	now := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns"}}
	eds.Status.ActiveReplicaSet = "agent-b"
	eds.Status.DomainGate = &v1alpha1.DomainGateStatus{ReplicaSet: "agent-b", Domain: "zone-b", PassedThrough: "zone-a",
		Gates: []v1alpha1.CanaryGateStatus{
			{Name: "window", Type: v1alpha1.WebhookConfirmStep, Since: metav1.NewTime(now.Add(-10 * time.Minute)), LastAnswer: "answered 503"},
		}}
	s := &snapshot{eds: eds, now: now}

	var out bytes.Buffer
	g.Expect(writeReport(&out, s, false)).To(gomega.Succeed())
	g.Expect(out.String()).To(gomega.ContainSubstring("Gates before domain zone-b:\n"))
	g.Expect(out.String()).To(gomega.MatchRegexp(`window\s+confirm-step\s+waiting for 10m\s+answered 503\n`))

	// Another replica set's record says nothing of this rollout.
	eds.Status.ActiveReplicaSet = "agent-c"
	out.Reset()
	g.Expect(writeReport(&out, s, false)).To(gomega.Succeed())
	g.Expect(out.String()).NotTo(gomega.ContainSubstring("Gates"))
}
