package inspect

import (
	"testing"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

func TestJudgeReadsTheOutcomeFromTheStatus(t *testing.T) {
	ready := metav1.Condition{Type: v1alpha1.ReadyCondition, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonRolledOut}
	notReady := metav1.Condition{Type: v1alpha1.ReadyCondition, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonRollingUpdate,
		Message: "rolling out"}
	stalled := metav1.Condition{Type: v1alpha1.StalledCondition, Status: metav1.ConditionTrue,
		Reason: v1alpha1.ReasonProgressDeadlineExceeded, Message: "no progress for 600s"}
	eds := func(generation int64, st v1alpha1.ExtendedDaemonSetStatus) *v1alpha1.ExtendedDaemonSet {
		e := &v1alpha1.ExtendedDaemonSet{Status: st}
		e.Generation = generation
		return e
	}
	for name, tc := range map[string]struct {
		eds  *v1alpha1.ExtendedDaemonSet
		want outcome
		why  string
	}{
		"rolled out": {eds(2, v1alpha1.ExtendedDaemonSetStatus{ObservedGeneration: 2, Conditions: []metav1.Condition{ready},
			Desired: 3, UpToDate: 3, Available: 3}), rolledOut, "3 of 3 pods up to date and available"},
		"ready at an older generation": {eds(3, v1alpha1.ExtendedDaemonSetStatus{ObservedGeneration: 2, Conditions: []metav1.Condition{ready},
			Desired: 3, UpToDate: 3, Available: 3}), inProgress, "the controller has not yet seen generation 3"},
		"ready but an old pod still counted": {eds(2, v1alpha1.ExtendedDaemonSetStatus{ObservedGeneration: 2, Conditions: []metav1.Condition{ready},
			Desired: 3, UpToDate: 3, Available: 4}), inProgress, "3 of 3 pods up to date, 4 available"},
		"rolling": {eds(2, v1alpha1.ExtendedDaemonSetStatus{ObservedGeneration: 2, Conditions: []metav1.Condition{notReady},
			Desired: 3, UpToDate: 1, Available: 3}), inProgress, "rolling out"},
		"canary failed": {eds(2, v1alpha1.ExtendedDaemonSetStatus{ObservedGeneration: 2, Conditions: []metav1.Condition{notReady},
			Canary: &v1alpha1.CanaryStatus{ReplicaSet: "agent-b", Failed: true, Reason: "CrashLoopBackOff", Message: "restarted 5 times"}}),
			failed, "canary agent-b failed: CrashLoopBackOff: restarted 5 times"},
		"canary failed, then the spec changed": {eds(3, v1alpha1.ExtendedDaemonSetStatus{ObservedGeneration: 2,
			Canary: &v1alpha1.CanaryStatus{ReplicaSet: "agent-b", Failed: true}}), inProgress, "the controller has not yet seen generation 3"},
		"canary paused": {eds(2, v1alpha1.ExtendedDaemonSetStatus{ObservedGeneration: 2, Conditions: []metav1.Condition{notReady},
			Canary: &v1alpha1.CanaryStatus{ReplicaSet: "agent-b", Paused: true}}), inProgress, "rolling out"},
		"stalled": {eds(2, v1alpha1.ExtendedDaemonSetStatus{ObservedGeneration: 2, Conditions: []metav1.Condition{notReady, stalled}}),
			failed, "stalled: ProgressDeadlineExceeded: no progress for 600s"},
	} {
		t.Run(name, func(t *testing.T) {
			v := judge(tc.eds)
			g := gomega.NewWithT(t)
			g.Expect(v.outcome).To(gomega.Equal(tc.want))
			g.Expect(v.why).To(gomega.Equal(tc.why))
		})
	}
}
