package canary

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// canaryPod is a running canary pod created at start, with one container.
func canaryPod(name string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(start)},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "agent", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
			}},
		},
	}
	for _, m := range mutate {
		m(pod)
	}
	return pod
}

func restarts(n int32, waiting, lastReason string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		c := &p.Status.ContainerStatuses[0]
		c.RestartCount = n
		if waiting != "" {
			c.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: waiting}}
		}
		if lastReason != "" {
			c.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: lastReason, ExitCode: 137}
		}
	}
}

func waiting(reason string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodPending
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "details"}}
	}
}

func dur(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

func TestJudge(t *testing.T) {
	autoPause := &v1alpha1.CanaryAutoPause{MaxRestarts: ptr.To[int32](2), MaxSlowStartDuration: dur(time.Minute)}
	autoFail := &v1alpha1.CanaryAutoFail{MaxRestarts: ptr.To[int32](5), MaxRestartsDuration: dur(10 * time.Minute), CanaryTimeout: dur(time.Hour)}
	both := &v1alpha1.CanaryStrategy{AutoPause: autoPause, AutoFail: autoFail}
	cases := []struct {
		name     string
		strategy *v1alpha1.CanaryStrategy
		pods     []*corev1.Pod
		after    time.Duration
		action   Action
		reason   string
		message  string
	}{
		{"healthy pods", both, []*corev1.Pod{canaryPod("a"), canaryPod("b")}, 5 * time.Minute, Continue, "", ""},
		{"restarts at the pause limit are fine", both, []*corev1.Pod{canaryPod("a", restarts(2, "", ""))}, time.Minute, Continue, "", ""},
		{"restarts above the pause limit pause, named by the waiting reason", both,
			[]*corev1.Pod{canaryPod("a", restarts(3, "CrashLoopBackOff", "Error"))}, time.Minute, Pause, "CrashLoopBackOff", "restarted 3 times (autoPause.maxRestarts 2)"},
		{"restarts above the fail limit fail", both,
			[]*corev1.Pod{canaryPod("a", restarts(6, "CrashLoopBackOff", "Error"))}, time.Minute, Fail, "CrashLoopBackOff", "container agent of canary pod a restarted 6 times (autoFail.maxRestarts 5)"},
		{"an OOM kill is named as such", both,
			[]*corev1.Pod{canaryPod("a", restarts(6, "CrashLoopBackOff", "OOMKilled"))}, time.Minute, Fail, "OOMKilled", ""},
		{"restarting longer than maxRestartsDuration fails", both,
			[]*corev1.Pod{canaryPod("a", restarts(1, "CrashLoopBackOff", ""))}, 11 * time.Minute, Fail, "CrashLoopBackOff", "longer than autoFail.maxRestartsDuration"},
		{"a restarted container running again does not count as restarting", both,
			[]*corev1.Pod{canaryPod("a", restarts(1, "", "Error"))}, 11 * time.Minute, Continue, "", ""},
		{"image pull errors within the slow start are tolerated", both,
			[]*corev1.Pod{canaryPod("a", waiting("ImagePullBackOff"))}, 30 * time.Second, Continue, "", ""},
		{"image pull errors past the slow start pause", both,
			[]*corev1.Pod{canaryPod("a", waiting("ImagePullBackOff"))}, 2 * time.Minute, Pause, "ImagePullBackOff", "cannot start: ImagePullBackOff details"},
		{"without a slow start, a cannot-start reason pauses at once",
			&v1alpha1.CanaryStrategy{AutoPause: &v1alpha1.CanaryAutoPause{}},
			[]*corev1.Pod{canaryPod("a", waiting("CreateContainerConfigError"))}, time.Second, Pause, "CreateContainerConfigError", ""},
		{"ContainerCreating past the slow start pauses", both,
			[]*corev1.Pod{canaryPod("a", waiting("ContainerCreating"))}, 2 * time.Minute, Pause, ReasonSlowStart, "not running after maxSlowStartDuration 1m0s"},
		{"the canary timeout fails even a paused canary", both,
			[]*corev1.Pod{canaryPod("a", waiting("ImagePullBackOff"))}, 61 * time.Minute, Fail, ReasonTimeoutExceeded, "canaryTimeout 1h0m0s"},
		{"failing wins over pausing, whatever the pod order", both,
			[]*corev1.Pod{canaryPod("b", restarts(9, "CrashLoopBackOff", "")), canaryPod("a", waiting("ImagePullBackOff"))}, 2 * time.Minute, Fail, "CrashLoopBackOff", "canary pod b"},
		{"pods are judged by name", both,
			[]*corev1.Pod{canaryPod("b", waiting("ErrImagePull")), canaryPod("a", waiting("InvalidImageName"))}, 2 * time.Minute, Pause, "InvalidImageName", "canary pod a"},
		{"no settings: the defaults fail a crash-looping canary", &v1alpha1.CanaryStrategy{},
			[]*corev1.Pod{canaryPod("a", restarts(99, "CrashLoopBackOff", ""))}, 2 * time.Hour, Fail, "CrashLoopBackOff", "(autoFail.maxRestarts 5)"},
		{"no settings: the defaults pause a restarting canary", &v1alpha1.CanaryStrategy{},
			[]*corev1.Pod{canaryPod("a", restarts(3, "CrashLoopBackOff", ""))}, time.Minute, Pause, "CrashLoopBackOff", "(autoPause.maxRestarts 2)"},
		{"disabled settings, no verdict", &v1alpha1.CanaryStrategy{
			AutoPause: &v1alpha1.CanaryAutoPause{Enabled: ptr.To(false), MaxRestarts: ptr.To[int32](0)},
			AutoFail:  &v1alpha1.CanaryAutoFail{Enabled: ptr.To(false), MaxRestarts: ptr.To[int32](0)},
		}, []*corev1.Pod{canaryPod("a", restarts(3, "CrashLoopBackOff", ""))}, time.Minute, Continue, "", ""},
		{"init containers count too", both, []*corev1.Pod{canaryPod("a", func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init", RestartCount: 7,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}
		})}, 10 * time.Second, Fail, "CrashLoopBackOff", "container init of canary pod a"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			v := Judge(tc.pods, tc.strategy, start, start.Add(tc.after))
			g.Expect(v.Action).To(gomega.Equal(tc.action), "verdict %+v", v)
			g.Expect(v.Reason).To(gomega.Equal(tc.reason))
			g.Expect(v.Message).To(gomega.ContainSubstring(tc.message))
		})
	}
}
