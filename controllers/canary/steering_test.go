package canary

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// laterInstance is the canary of rs-2 started again from nothing, as after
// a rollback and the same template applied again: annotations and spec
// keep whatever steering values the earlier instance was given.
func laterInstance(in Input, d time.Duration) Input {
	in.Status, in.Now = &v1alpha1.CanaryStatus{ReplicaSet: "rs-1"}, start.Add(d)
	return in
}

// A steering value acts on the canary instance it was given for, never on
// a later canary of the same replica set: validate, fail, unpause and
// skip-step left behind (annotation or spec twin) are ignored by the next
// instance, and so is a fail left behind when a failed canary is retried.
func TestSteeringLeftBehindActsOnlyOnItsInstance(t *testing.T) {
	manual := func() *v1alpha1.CanaryStrategy {
		return &v1alpha1.CanaryStrategy{ValidationMode: v1alpha1.CanaryValidationManual}
	}
	cases := []struct {
		name     string
		strategy func() *v1alpha1.CanaryStrategy
		steer    func(in *Input)
		// acted says what the value did to the instance it was given for,
		// and must not do to the later one.
		acted func(g gomega.Gomega, res Result)
	}{
		{"validated annotation", manual, func(in *Input) {
			in.Annotations = map[string]string{v1alpha1.CanaryValidatedAnnotation: "rs-2"}
		}, func(g gomega.Gomega, res Result) { g.Expect(res.Promote).To(gomega.BeTrue()) }},
		{"validate in the spec", manual, func(in *Input) { in.Strategy.Validate = "rs-2" },
			func(g gomega.Gomega, res Result) { g.Expect(res.Promote).To(gomega.BeTrue()) }},
		{"failed annotation", manual, func(in *Input) {
			in.Annotations = map[string]string{v1alpha1.CanaryFailedAnnotation: "rs-2"}
		}, func(g gomega.Gomega, res Result) { g.Expect(res.Status.Failed).To(gomega.BeTrue()) }},
		{"fail in the spec", manual, func(in *Input) { in.Strategy.Fail = "rs-2" },
			func(g gomega.Gomega, res Result) { g.Expect(res.Status.Failed).To(gomega.BeTrue()) }},
		{"unpaused annotation", manual, func(in *Input) {
			in.Pods = []*corev1.Pod{canaryPod("rs-2-x", restarts(3, "CrashLoopBackOff", "Error"))}
			in.Annotations = map[string]string{v1alpha1.CanaryUnpausedAnnotation: "rs-2"}
		}, func(g gomega.Gomega, res Result) {
			g.Expect(res.Status.Reason).To(gomega.Equal(ReasonWaitingForValidation))
		}},
		{"unpause in the spec", manual, func(in *Input) {
			in.Pods = []*corev1.Pod{canaryPod("rs-2-x", restarts(3, "CrashLoopBackOff", "Error"))}
			in.Strategy.Unpause = "rs-2"
		}, func(g gomega.Gomega, res Result) {
			g.Expect(res.Status.Reason).To(gomega.Equal(ReasonWaitingForValidation))
		}},
		{"skip-step annotation", pausedFirstStep, func(in *Input) {
			in.Annotations = map[string]string{v1alpha1.CanarySkipStepAnnotation: "rs-2/1"}
		}, func(g gomega.Gomega, res Result) { g.Expect(res.Status.Step).To(gomega.BeEquivalentTo(2)) }},
		{"bare step number", pausedFirstStep, func(in *Input) {
			in.Annotations = map[string]string{v1alpha1.CanarySkipStepAnnotation: "1"}
		}, func(g gomega.Gomega, res Result) { g.Expect(res.Status.Step).To(gomega.BeEquivalentTo(2)) }},
		{"skipStep in the spec", pausedFirstStep, func(in *Input) { in.Strategy.SkipStep = "rs-2/1" },
			func(g gomega.Gomega, res Result) { g.Expect(res.Status.Step).To(gomega.BeEquivalentTo(2)) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			in := stepInput(0, tc.strategy())
			in.Status = nil
			res, err := Step(in)
			g.Expect(err).NotTo(gomega.HaveOccurred())
			in.Status = res.Status

			// Given while the first instance runs, the value acts on it.
			given := in
			given.Strategy = in.Strategy.DeepCopy()
			given.Now = start.Add(time.Minute)
			tc.steer(&given)
			res, err = Step(given)
			g.Expect(err).NotTo(gomega.HaveOccurred())
			tc.acted(g, res)

			// Left behind, it does nothing to the next instance, at its
			// start or later.
			later := laterInstance(given, time.Hour)
			for _, d := range []time.Duration{time.Hour, time.Hour + time.Minute} {
				later.Now = start.Add(d)
				res, err = Step(later)
				g.Expect(err).NotTo(gomega.HaveOccurred())
				g.Expect(res.Promote).To(gomega.BeFalse(), "promoted by a value given to an earlier canary")
				g.Expect(res.Status.Failed).To(gomega.BeFalse(), "failed by a value given to an earlier canary")
				g.Expect(res.Status.Step).To(gomega.BeNumerically("<=", 1), "a step skipped by a value given to an earlier canary")
				if len(later.Pods) > 0 && later.Pods[0].Status.ContainerStatuses[0].RestartCount > 0 {
					g.Expect(res.Status.Paused).To(gomega.BeTrue())
					g.Expect(res.Status.Reason).To(gomega.Equal("CrashLoopBackOff"), "unpaused by a value given to an earlier canary")
				}
				later.Status = res.Status
			}
		})
	}
}

// pausedFirstStep is a canary whose first step waits for a person.
func pausedFirstStep() *v1alpha1.CanaryStrategy {
	return &v1alpha1.CanaryStrategy{Steps: []v1alpha1.CanaryStep{
		{Replicas: intstr.FromInt32(1), Pause: true}, timed(intstr.FromInt32(2), time.Hour),
	}}
}

// A retried canary is a new instance: the fail that failed the earlier
// one does not fail it again.
func TestSteeringFailLeftBehindDoesNotFailTheRetry(t *testing.T) {
	g := gomega.NewWithT(t)
	in := stepInput(time.Minute, &v1alpha1.CanaryStrategy{})
	in.Annotations = map[string]string{v1alpha1.CanaryFailedAnnotation: "rs-2"}
	res := expectOutcome(g, in, outcome{failed: true, reason: ReasonManual, transition: Failed})

	in.LastHandledRetry, in.Status = res.LastHandledRetry, res.Status
	in.Annotations[v1alpha1.CanaryRetryAnnotation] = "again"
	in.Now = start.Add(2 * time.Minute)
	res = expectOutcome(g, in, outcome{transition: Retried})

	in.LastHandledRetry, in.Status = res.LastHandledRetry, res.Status
	in.Now = start.Add(3 * time.Minute)
	expectOutcome(g, in, outcome{})
}

// kubectl eds names the instance it steers, so acting again on a later
// instance of the same replica set writes a value that differs from the
// one left behind, and that value acts; a value naming another instance
// acts on nothing.
func TestSteeringNamesTheInstance(t *testing.T) {
	g := gomega.NewWithT(t)
	in := stepInput(0, &v1alpha1.CanaryStrategy{ValidationMode: v1alpha1.CanaryValidationManual})
	in.Status = nil
	first := expectOutcome(g, in, outcome{paused: true, reason: ReasonWaitingForValidation, transition: Started}).Status
	g.Expect(first.Instance).NotTo(gomega.BeEmpty())
	g.Expect(SteeringValue(first)).To(gomega.Equal("rs-2@" + first.Instance))
	in.Status = first
	in.Annotations = map[string]string{v1alpha1.CanaryValidatedAnnotation: SteeringValue(first)}
	expectOutcome(g, in, outcome{promote: true, paused: true, transition: Promoted})

	later := laterInstance(in, time.Hour)
	second := expectOutcome(g, later, outcome{paused: true, reason: ReasonWaitingForValidation, transition: Started}).Status
	g.Expect(second.Instance).NotTo(gomega.Equal(first.Instance))
	g.Expect(second.LeftoverSteering).To(gomega.Equal(map[string]string{v1alpha1.CanaryValidatedAnnotation: SteeringValue(first)}))
	later.Status, later.Now = second, start.Add(time.Hour+time.Minute)
	expectOutcome(g, later, outcome{paused: true, reason: ReasonWaitingForValidation})

	for _, other := range []string{"rs-2@" + first.Instance, "rs-2@made-up", "rs-1@" + second.Instance} {
		later.Annotations = map[string]string{v1alpha1.CanaryValidatedAnnotation: other}
		expectOutcome(g, later, outcome{paused: true, reason: ReasonWaitingForValidation})
	}
	later.Annotations = map[string]string{v1alpha1.CanaryValidatedAnnotation: SteeringValue(second)}
	expectOutcome(g, later, outcome{promote: true, paused: true, transition: Promoted})

	// The spec twin takes the same names, so git can steer a later instance too.
	later.Annotations, later.Strategy = nil, &v1alpha1.CanaryStrategy{ValidationMode: v1alpha1.CanaryValidationManual, Fail: SteeringValue(second)}
	expectOutcome(g, later, outcome{failed: true, reason: ReasonManual, transition: Failed})
}

// Skipping the same step of a later instance of the same replica set
// skips it: kubectl eds's value names the instance.
func TestSteeringSkipsTheSameStepOfALaterInstance(t *testing.T) {
	g := gomega.NewWithT(t)
	in := stepInput(0, pausedFirstStep())
	in.Status = nil
	first, err := Step(in)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	in.Status = first.Status
	in.Annotations = map[string]string{v1alpha1.CanarySkipStepAnnotation: SkipValue(first.Status, 1)}
	res, err := Step(in)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res.Status.Step).To(gomega.BeEquivalentTo(2))

	later := laterInstance(in, time.Hour)
	res, err = Step(later)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res.Status.Step).To(gomega.BeEquivalentTo(1), "the first instance's skip is left behind")
	later.Status, later.Now = res.Status, start.Add(time.Hour+time.Minute)
	g.Expect(SkipValue(res.Status, 1)).NotTo(gomega.Equal(SkipValue(first.Status, 1)))
	later.Annotations = map[string]string{v1alpha1.CanarySkipStepAnnotation: SkipValue(res.Status, 1)}
	res, err = Step(later)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res.Status.Step).To(gomega.BeEquivalentTo(2))
}

// A canary recorded by an older controller, without an instance, is
// steered by the plain replica set name as before, and gets an instance.
func TestSteeringACanaryRecordedWithoutAnInstance(t *testing.T) {
	g := gomega.NewWithT(t)
	in := stepInput(time.Minute, &v1alpha1.CanaryStrategy{ValidationMode: v1alpha1.CanaryValidationManual})
	g.Expect(in.Status.Instance).To(gomega.BeEmpty())
	res := expectOutcome(g, in, outcome{paused: true, reason: ReasonWaitingForValidation})
	g.Expect(res.Status.Instance).NotTo(gomega.BeEmpty())
	g.Expect(res.Status.LeftoverSteering).To(gomega.BeNil())
	in.Status, in.Strategy.Validate = res.Status, "rs-2"
	expectOutcome(g, in, outcome{promote: true, paused: true, transition: Promoted})
}
