package canary

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// Action is what the canary's own pods call for.
type Action int

const (
	// Continue: nothing wrong seen.
	Continue Action = iota
	// Pause: the canary waits for a person.
	Pause
	// Fail: the canary nodes go back to the active template.
	Fail
)

// Verdict is an Action with the reason a person reads in the status, the
// condition and the event.
type Verdict struct {
	Action  Action
	Reason  string
	Message string
}

// Reasons of a verdict that no container reason names.
const (
	ReasonRestartsExceeded = "RestartsExceeded"
	ReasonTimeoutExceeded  = "TimeoutExceeded"
	ReasonSlowStart        = "SlowStartTimeoutExceeded"
)

// cannotStartReasons are the waiting reasons a kubelet gives a container
// that will not start by itself: image problems and container creation
// errors.
var cannotStartReasons = []string{
	"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull",
	"RegistryUnavailable", "SignatureValidationFailed",
	"CreateContainerConfigError", "CreateContainerError", "RunContainerError",
	"PreCreateHookError", "PreStartHookError", "PostStartHookError",
}

// Judge looks at the canary pods for a reason to pause or fail the canary,
// per the autoPause and autoFail settings of strategy in effect (see
// restartChecksOf). Failing wins over pausing; within one action, pods are
// looked at by name so the verdict is stable.
func Judge(pods []*corev1.Pod, strategy *v1alpha1.CanaryStrategy, startedAt, now time.Time) Verdict {
	pods = slices.Clone(pods)
	slices.SortFunc(pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	checks := restartChecksOf(strategy)
	if checks.fail != nil {
		if v := judgeFail(pods, checks.fail, startedAt, now); v.Action == Fail {
			return v
		}
	}
	if checks.pause != nil {
		return judgePause(pods, checks.pause, now)
	}
	return Verdict{}
}

// restartChecks are a canary's autoPause and autoFail in effect (nil when
// off), and its noRestartsDuration as written (nil when unset).
type restartChecks struct {
	pause   *v1alpha1.CanaryAutoPause
	fail    *v1alpha1.CanaryAutoFail
	written *metav1.Duration
}

// restartChecksOf is how strategy judges its canary's restarts. The schema
// defaults autoPause and autoFail to on, with the original project's
// limits; an object stored before it did has them nil (or their limits
// unset), and is judged with the same defaults, so that a canary with only
// a duration never promotes a crash-looping version. Enabled false, and
// only that, turns a check off.
func restartChecksOf(strategy *v1alpha1.CanaryStrategy) restartChecks {
	checks := restartChecks{written: strategy.NoRestartsDuration}
	if p := strategy.AutoPause; p == nil || enabled(p.Enabled) {
		checks.pause = &v1alpha1.CanaryAutoPause{MaxRestarts: ptr.To(v1alpha1.DefaultAutoPauseMaxRestarts)}
		if p != nil {
			checks.pause.MaxSlowStartDuration = p.MaxSlowStartDuration
			if p.MaxRestarts != nil {
				checks.pause.MaxRestarts = p.MaxRestarts
			}
		}
	}
	if f := strategy.AutoFail; f == nil || enabled(f.Enabled) {
		checks.fail = &v1alpha1.CanaryAutoFail{MaxRestarts: ptr.To(v1alpha1.DefaultAutoFailMaxRestarts)}
		if f != nil {
			checks.fail.MaxRestartsDuration, checks.fail.CanaryTimeout = f.MaxRestartsDuration, f.CanaryTimeout
			if f.MaxRestarts != nil {
				checks.fail.MaxRestarts = f.MaxRestarts
			}
		}
	}
	return checks
}

// defaultNoRestarts is noRestartsDuration when unset.
var defaultNoRestarts = mustParse(v1alpha1.DefaultNoRestartsDuration)

// noRestarts is how long before its end a canary (or step) of duration
// must have seen no restart to be promoted: as written, else, while
// autoPause or autoFail looks at restarts, 5m or the duration when
// shorter (a written value may not exceed it either); zero when restarts
// are not looked at.
func (c restartChecks) noRestarts(duration time.Duration) time.Duration {
	switch {
	case c.written != nil:
		return c.written.Duration
	case c.pause == nil && c.fail == nil:
		return 0
	}
	return min(defaultNoRestarts, duration)
}

func enabled(b *bool) bool { return b == nil || *b }

func judgeFail(pods []*corev1.Pod, f *v1alpha1.CanaryAutoFail, startedAt, now time.Time) Verdict {
	if f.CanaryTimeout != nil && now.Sub(startedAt) > f.CanaryTimeout.Duration {
		return Verdict{Fail, ReasonTimeoutExceeded, fmt.Sprintf("the canary has not been promoted within canaryTimeout %s", f.CanaryTimeout.Duration)}
	}
	for _, pod := range pods {
		for _, c := range containerStatuses(pod) {
			if f.MaxRestarts != nil && c.RestartCount > *f.MaxRestarts {
				return Verdict{Fail, restartReason(c), fmt.Sprintf("container %s of canary pod %s restarted %d times (autoFail.maxRestarts %d)",
					c.Name, pod.Name, c.RestartCount, *f.MaxRestarts)}
			}
			// A pod's status does not say when its first restart was; a
			// container restarting now has been at it since its pod started
			// at the latest.
			if f.MaxRestartsDuration != nil && c.RestartCount > 0 && restarting(c) &&
				now.Sub(pod.CreationTimestamp.Time) > f.MaxRestartsDuration.Duration {
				return Verdict{Fail, restartReason(c), fmt.Sprintf("container %s of canary pod %s keeps restarting for longer than autoFail.maxRestartsDuration %s",
					c.Name, pod.Name, f.MaxRestartsDuration.Duration)}
			}
		}
	}
	return Verdict{}
}

func judgePause(pods []*corev1.Pod, p *v1alpha1.CanaryAutoPause, now time.Time) Verdict {
	var slowStart time.Duration
	if p.MaxSlowStartDuration != nil {
		slowStart = p.MaxSlowStartDuration.Duration
	}
	for _, pod := range pods {
		age := now.Sub(pod.CreationTimestamp.Time)
		for _, c := range containerStatuses(pod) {
			if p.MaxRestarts != nil && c.RestartCount > *p.MaxRestarts {
				return Verdict{Pause, restartReason(c), fmt.Sprintf("container %s of canary pod %s restarted %d times (autoPause.maxRestarts %d)",
					c.Name, pod.Name, c.RestartCount, *p.MaxRestarts)}
			}
			w := c.State.Waiting
			if w != nil && slices.Contains(cannotStartReasons, w.Reason) && age > slowStart {
				return Verdict{Pause, w.Reason, fmt.Sprintf("container %s of canary pod %s cannot start: %s %s", c.Name, pod.Name, w.Reason, w.Message)}
			}
		}
		if slowStart > 0 && age > slowStart && pod.Status.Phase == corev1.PodPending {
			return Verdict{Pause, ReasonSlowStart, fmt.Sprintf("canary pod %s is not running after maxSlowStartDuration %s", pod.Name, slowStart)}
		}
	}
	return Verdict{}
}

func containerStatuses(pod *corev1.Pod) []corev1.ContainerStatus {
	return slices.Concat(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses)
}

// restarting reports whether a container is between two runs.
func restarting(c corev1.ContainerStatus) bool {
	return c.State.Waiting != nil || c.State.Terminated != nil
}

// restartReason names why a container restarts: how it last ended
// (OOMKilled, Error...) when the kubelet said, else what it waits for
// (CrashLoopBackOff).
func restartReason(c corev1.ContainerStatus) string {
	switch {
	case c.LastTerminationState.Terminated != nil && c.LastTerminationState.Terminated.Reason == "OOMKilled":
		return "OOMKilled"
	case c.State.Waiting != nil && c.State.Waiting.Reason != "":
		return c.State.Waiting.Reason
	case c.LastTerminationState.Terminated != nil && c.LastTerminationState.Terminated.Reason != "":
		return c.LastTerminationState.Terminated.Reason
	default:
		return ReasonRestartsExceeded
	}
}
