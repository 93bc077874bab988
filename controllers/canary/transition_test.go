package canary

import (
	"testing"
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

func TestTransition(t *testing.T) {
	running := &v1alpha1.CanaryStatus{ReplicaSet: "v2"}
	paused := func(reason string) *v1alpha1.CanaryStatus {
		return &v1alpha1.CanaryStatus{ReplicaSet: "v2", Paused: true, Reason: reason}
	}
	failed := &v1alpha1.CanaryStatus{ReplicaSet: "v2", Failed: true}
	for _, tc := range []struct {
		name          string
		before, after *v1alpha1.CanaryStatus
		promoted      bool
		want          string
	}{
		{"started", nil, running, false, Started},
		{"a new template starts a new canary", &v1alpha1.CanaryStatus{ReplicaSet: "v1"}, running, false, Started},
		{"nothing new", running, running, false, ""},
		{"promoted", running, nil, true, Promoted},
		{"failed", running, failed, false, Failed},
		{"failed at its start", nil, failed, false, Failed},
		{"still failed", failed, failed, false, ""},
		{"retried", failed, running, false, Retried},
		{"paused", running, paused("CrashLoopBackOff"), false, Paused},
		{"paused for another reason", paused("CrashLoopBackOff"), paused(v1alpha1.ReasonAnalysisError), false, Paused},
		{"still paused", paused("CrashLoopBackOff"), paused("CrashLoopBackOff"), false, ""},
		{"resumed", paused("CrashLoopBackOff"), running, false, Resumed},
		{"a manual canary waits, as it should", running, paused(ReasonWaitingForValidation), false, ""},
		{"back to waiting for validation", paused(ReasonPausedByUser), paused(ReasonWaitingForValidation), false, Resumed},
		{"dropped", running, nil, false, ""},
	} {
		if got := Transition(tc.before, tc.after, tc.promoted); got != tc.want {
			t.Errorf("%s: Transition = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestReadyAtIsRecordedOnce(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	st := &v1alpha1.CanaryStatus{}
	if got := ReadyAt(st, false, now); got != nil {
		t.Fatalf("ReadyAt before the pods are ready = %v, want nil", got)
	}
	first := ReadyAt(st, true, now)
	if first == nil || !first.Time.Equal(now) {
		t.Fatalf("ReadyAt once ready = %v, want %v", first, now)
	}
	st.ReadyAt = first
	if got := ReadyAt(st, false, now.Add(time.Minute)); got == nil || !got.Time.Equal(now) {
		t.Fatalf("ReadyAt after the pods went unready = %v, want the first time %v", got, now)
	}
}
