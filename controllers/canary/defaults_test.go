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

// A canary with only a duration, as stored before the schema defaulted
// autoPause and autoFail (nil), or as the schema defaults them now (set,
// with their fields unset), is judged with the original project's
// defaults: autoPause at 2 restarts, autoFail at 5, and no promotion while
// a container restarted in the last 5 minutes. Turned off explicitly,
// restarts are not checked.
func TestDefaultsNeverPromoteACrashLoopingCanary(t *testing.T) {
	restartedAgo := func(n int32, ago time.Duration) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			c := &p.Status.ContainerStatuses[0]
			c.RestartCount = n
			c.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "Error", FinishedAt: metav1.NewTime(start.Add(10*time.Minute - ago))}
		}
	}
	stored := func() *v1alpha1.CanaryStrategy { return &v1alpha1.CanaryStrategy{Duration: dur(10 * time.Minute)} }
	defaulted := func() *v1alpha1.CanaryStrategy {
		return &v1alpha1.CanaryStrategy{Duration: dur(10 * time.Minute), AutoPause: &v1alpha1.CanaryAutoPause{}, AutoFail: &v1alpha1.CanaryAutoFail{}}
	}
	off := func() *v1alpha1.CanaryStrategy {
		return &v1alpha1.CanaryStrategy{Duration: dur(10 * time.Minute),
			AutoPause: &v1alpha1.CanaryAutoPause{Enabled: ptr.To(false)}, AutoFail: &v1alpha1.CanaryAutoFail{Enabled: ptr.To(false)}}
	}
	cases := []struct {
		name     string
		strategy func() *v1alpha1.CanaryStrategy
		pod      func(*corev1.Pod)
		promote  bool
		failed   bool
		paused   bool
	}{
		{"stored: crash-looping fails", stored, restartedAgo(6, time.Minute), false, true, false},
		{"stored: restarting pauses", stored, restartedAgo(3, 8*time.Minute), false, false, true},
		{"stored: a recent restart holds promotion", stored, restartedAgo(1, time.Minute), false, false, false},
		{"stored: an old restart does not", stored, restartedAgo(1, 6*time.Minute), true, false, false},
		{"defaulted: crash-looping fails", defaulted, restartedAgo(6, time.Minute), false, true, false},
		{"defaulted: restarting pauses", defaulted, restartedAgo(3, 8*time.Minute), false, false, true},
		{"defaulted: a recent restart holds promotion", defaulted, restartedAgo(1, time.Minute), false, false, false},
		{"turned off: restarts are not checked", off, restartedAgo(6, time.Minute), true, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			in := stepInput(10*time.Minute, tc.strategy())
			in.Pods = []*corev1.Pod{canaryPod("rs-2-x", tc.pod)}
			res, err := Step(in)
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(res.Promote).To(gomega.Equal(tc.promote), "promoted")
			if tc.promote {
				return
			}
			g.Expect(res.Status.Failed).To(gomega.Equal(tc.failed), "failed: %s", res.Status.Message)
			g.Expect(res.Status.Paused).To(gomega.Equal(tc.paused), "paused: %s", res.Status.Message)
			if !tc.failed && !tc.paused {
				g.Expect(res.RequeueAfter).To(gomega.Equal(4*time.Minute), "held until 5 minutes after the last restart")
			}
		})
	}
}

// The defaults of code and schema are one: the effective settings of an
// empty strategy are the constants the schema markers repeat.
func TestDefaultsOfAnEmptyStrategy(t *testing.T) {
	g := gomega.NewWithT(t)
	checks := restartChecksOf(&v1alpha1.CanaryStrategy{})
	g.Expect(checks.pause).NotTo(gomega.BeNil())
	g.Expect(*checks.pause.MaxRestarts).To(gomega.BeEquivalentTo(v1alpha1.DefaultAutoPauseMaxRestarts))
	g.Expect(checks.fail).NotTo(gomega.BeNil())
	g.Expect(*checks.fail.MaxRestarts).To(gomega.BeEquivalentTo(v1alpha1.DefaultAutoFailMaxRestarts))
	g.Expect(checks.noRestarts(3*time.Minute)).To(gomega.Equal(3*time.Minute), "at most the duration, as the schema requires of a value written")
	g.Expect(checks.noRestarts(time.Hour)).To(gomega.Equal(mustParse(v1alpha1.DefaultNoRestartsDuration)))

	written := restartChecksOf(&v1alpha1.CanaryStrategy{NoRestartsDuration: dur(time.Minute),
		AutoPause: &v1alpha1.CanaryAutoPause{Enabled: ptr.To(false)}, AutoFail: &v1alpha1.CanaryAutoFail{Enabled: ptr.To(false)}})
	g.Expect(written.pause).To(gomega.BeNil())
	g.Expect(written.fail).To(gomega.BeNil())
	g.Expect(written.noRestarts(time.Hour)).To(gomega.Equal(time.Minute), "a noRestartsDuration written is kept")
	off := restartChecksOf(&v1alpha1.CanaryStrategy{AutoPause: &v1alpha1.CanaryAutoPause{Enabled: ptr.To(false)}, AutoFail: &v1alpha1.CanaryAutoFail{Enabled: ptr.To(false)}})
	g.Expect(off.noRestarts(time.Hour)).To(gomega.BeZero(), "with both checks off, restarts hold nothing")
}
