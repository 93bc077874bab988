package canary

import (
	"strconv"
	"strings"
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// Steering is an order a person gives a running canary: with kubectl eds
// (an annotation) or from git (its spec twin). This file is the one place
// that forms and reads their values.
type Steering int

// The steering orders.
const (
	SteerValidate Steering = iota
	SteerFail
	SteerUnpause
	SteerSkipStep
)

var steerings = []Steering{SteerValidate, SteerFail, SteerUnpause, SteerSkipStep}

// Annotation is the annotation that gives s.
func (s Steering) Annotation() string {
	return [...]string{
		v1alpha1.CanaryValidatedAnnotation, v1alpha1.CanaryFailedAnnotation,
		v1alpha1.CanaryUnpausedAnnotation, v1alpha1.CanarySkipStepAnnotation,
	}[s]
}

// Field is the path of s's spec twin.
func (s Steering) Field() string {
	return "spec.strategy.canary." + [...]string{"validate", "fail", "unpause", "skipStep"}[s]
}

func (s Steering) specValue(strategy *v1alpha1.CanaryStrategy) string {
	if strategy == nil {
		return ""
	}
	return [...]string{strategy.Validate, strategy.Fail, strategy.Unpause, strategy.SkipStep}[s]
}

// LeftoverSteering is what a canary instance records as it starts: every
// steering value present then, by annotation name or spec field path.
// Those were given to an earlier canary (of the same replica set, maybe:
// a retry, or a template applied again after a rollback, reuses it), so
// they never act on this one; nil when there is none.
func LeftoverSteering(strategy *v1alpha1.CanaryStrategy, annotations map[string]string) map[string]string {
	var left map[string]string
	for _, s := range steerings {
		for key, value := range map[string]string{s.Annotation(): annotations[s.Annotation()], s.Field(): s.specValue(strategy)} {
			if value == "" {
				continue
			}
			if left == nil {
				left = map[string]string{}
			}
			left[key] = value
		}
	}
	return left
}

// newInstance is the instance of a canary that starts at now: any two
// runs of a replica set's canary start at different times.
func newInstance(now time.Time) string {
	return strconv.FormatInt(now.UnixNano(), 36)
}

// SteeringValue is the value of validate, fail and unpause (annotation or
// spec twin) that kubectl eds writes for the canary instance st:
// "<replicaSet>@<instance>", or the replica set alone for a canary
// recorded without an instance. Naming the instance makes a value given to
// a later run of the same replica set differ from the one left behind.
func SteeringValue(st *v1alpha1.CanaryStatus) string {
	if st.Instance == "" {
		return st.ReplicaSet
	}
	return st.ReplicaSet + "@" + st.Instance
}

// SkipValue is the skip-step value (annotation or spec twin) that skips
// step (from 1) of the canary instance st.
func SkipValue(st *v1alpha1.CanaryStatus, step int32) string {
	return SteeringValue(st) + "/" + strconv.Itoa(int(step))
}

// Steered says whether s, as annotation or spec twin, orders the canary
// instance st: the value names st (see Addresses), and was not already there
// when st started. For skip-step, see SkipRequested.
func Steered(s Steering, strategy *v1alpha1.CanaryStrategy, annotations map[string]string, st *v1alpha1.CanaryStatus) bool {
	annotation, spec := given(s, strategy, annotations, st)
	return Addresses(annotation, st) || Addresses(spec, st)
}

// SkipRequested says whether skip-step, as annotation or spec twin, moves
// the canary instance st on from step (from 1): the value names st and
// step, or, for the annotation only, is the bare step number; and was not
// already there when st started.
func SkipRequested(strategy *v1alpha1.CanaryStrategy, annotations map[string]string, st *v1alpha1.CanaryStatus, step int32) bool {
	n := strconv.Itoa(int(step))
	skips := func(value string) bool {
		canary, at, ok := cutLast(value, "/")
		return ok && at == n && Addresses(canary, st)
	}
	annotation, spec := given(SteerSkipStep, strategy, annotations, st)
	return annotation == n || skips(annotation) || skips(spec)
}

// given is the annotation and spec values of s, each empty when it was
// already there when st started.
func given(s Steering, strategy *v1alpha1.CanaryStrategy, annotations map[string]string, st *v1alpha1.CanaryStatus) (annotation, spec string) {
	annotation, spec = annotations[s.Annotation()], s.specValue(strategy)
	if annotation == st.LeftoverSteering[s.Annotation()] {
		annotation = ""
	}
	if spec == st.LeftoverSteering[s.Field()] {
		spec = ""
	}
	return annotation, spec
}

// Addresses says whether a validate, fail or unpause value names the
// canary instance st: its replica set, or its replica set and its
// instance. A value naming another instance of the same replica set names
// nothing.
func Addresses(value string, st *v1alpha1.CanaryStatus) bool {
	rs, instance, withInstance := strings.Cut(value, "@")
	if value == "" || rs != st.ReplicaSet {
		return false
	}
	return !withInstance || (st.Instance != "" && instance == st.Instance)
}

func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}
