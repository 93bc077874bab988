package canary

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// Input is what one step of a canary's life is decided from.
type Input struct {
	Strategy    *v1alpha1.CanaryStrategy
	Annotations map[string]string
	// Status is the canary recorded so far, nil when none.
	Status *v1alpha1.CanaryStatus
	// LastHandledRetry is the retry token already acted upon, or seen
	// while no canary had failed.
	LastHandledRetry string
	// ReplicaSet and TemplateHash name the current template's replica set,
	// the canary.
	ReplicaSet, TemplateHash string
	// Candidates are the nodes the canary template fits and the canary node
	// selector allows, unhealthy ones marked: those are kept by the
	// recorded canary of ReplicaSet but never newly picked. Desired is the
	// number of nodes the template fits.
	Candidates []Candidate
	Desired    int
	// Pods are the canary replica set's pods.
	Pods []*corev1.Pod
	// Ready: every canary node recorded in Status runs an available
	// canary pod, so the canary has really been exercised there.
	Ready bool
	// Analysis is the canary's metric analysis so far, nil before the first
	// measurement; with Strategy.Analysis set, promotion needs it Successful.
	Analysis *v1alpha1.AnalysisStatus
	// ProgressDeadline is spec.progressDeadlineSeconds: a canary that
	// finds no node to run on within it stalls.
	ProgressDeadline time.Duration
	// Answers are the latest answers of the canary instance's gates, kept
	// in memory by whoever asks them; a gate missing has not answered.
	Answers map[GatePoint]GateAnswer
	Now     time.Time
}

// Result is the canary's next state.
type Result struct {
	// Status is the canary to record.
	Status *v1alpha1.CanaryStatus
	// Promote: the canary template becomes the active one.
	Promote          bool
	LastHandledRetry string
	// Transition, when set, is worth an event.
	Transition string
	// RequeueAfter is when time alone changes the decision.
	RequeueAfter time.Duration
	// Asks are the gates the canary waits at: their receivers are to be
	// asked (never from the decision itself), and their answers given in
	// the next Input.
	Asks []GateAsk
}

// Transitions of a canary, as event reasons.
const (
	Started  = "CanaryStarted"
	Promoted = "CanaryPromoted"
	Paused   = "CanaryPaused"
	Resumed  = "CanaryResumed"
	Failed   = "CanaryFailed"
	Retried  = "CanaryRetried"
)

// Reasons of a canary's state set by people rather than by its pods.
const (
	// ReasonManual: a person failed the canary.
	ReasonManual = "FailedByUser"
	// ReasonPausedByUser: a person paused the canary.
	ReasonPausedByUser = "PausedByUser"
	// ReasonWaitingForValidation: a manual canary waits for a person.
	ReasonWaitingForValidation = "WaitingForValidation"
	// ReasonWaitingForNodes: no candidate node is healthy enough to be a
	// canary node.
	ReasonWaitingForNodes = "WaitingForNodes"
	// ReasonNothingToCanary: no node runs the template.
	ReasonNothingToCanary = "NothingToCanary"
)

// nodesPoll is how often a canary without enough healthy nodes looks
// again.
const nodesPoll = 30 * time.Second

// defaultDuration is how long an auto canary runs when duration is unset.
var defaultDuration = mustParse(v1alpha1.DefaultCanaryDuration)

// Step decides the canary's next state: start it, keep its nodes, fail,
// pause or promote it. Failing (its pods, a person, its analysis) wins over
// everything; a person's validation promotes even a paused canary; an auto
// canary is promoted once its duration has elapsed with no restart in its
// last noRestartsDuration, every canary pod is available, and its analysis,
// when it has one, is Successful.
func Step(in Input) (Result, error) {
	res, err := step(in)
	before := in.Status
	if before != nil && before.ReplicaSet != in.ReplicaSet {
		before = nil
	}
	res.Transition = Transition(before, res.Status, res.Promote)
	return res, err
}

func step(in Input) (Result, error) {
	res := Result{LastHandledRetry: in.LastHandledRetry}
	st := in.Status.DeepCopy()
	if st != nil && st.ReplicaSet != in.ReplicaSet {
		st = nil
	}
	switch token := RetryToken(in.Strategy, in.Annotations); {
	case st == nil || !st.Failed:
		// A token seen before the canary fails cannot ask to retry that
		// failure: only a token changed after it does.
		res.LastHandledRetry = RetryHandled(token, in.LastHandledRetry)
	case RetryAsked(token, in.LastHandledRetry):
		st, res.LastHandledRetry = nil, RetryHandled(token, in.LastHandledRetry)
	}
	if st != nil && in.Analysis != nil {
		st.Analysis = in.Analysis.DeepCopy()
	}
	if st == nil {
		st = &v1alpha1.CanaryStatus{
			ReplicaSet: in.ReplicaSet, TemplateHash: in.TemplateHash, StartedAt: &metav1.Time{Time: in.Now},
			Instance: newInstance(in.Now), LeftoverSteering: LeftoverSteering(in.Strategy, in.Annotations),
		}
	}
	res.Status = st
	if st.Failed {
		return res, nil
	}
	if st.StartedAt == nil {
		// startedAt is optional in the API: a canary recorded without it
		// (a status written by hand, or by an older controller) starts its
		// clock now rather than failing every reconcile on it.
		st.StartedAt = &metav1.Time{Time: in.Now}
	}
	if st.Instance == "" {
		// Recorded by an older controller: the values present now may have
		// been given to it, so they are not taken for leftovers.
		st.Instance = newInstance(in.Now)
	}
	st.ReadyAt = ReadyAt(st, in.Ready, in.Now)
	plan, planErr := planOf(in, st)
	kept, nodes := canaryNodes(in, st)
	previous, want := st.Nodes, 0
	// Before a confirm-start gate passes, the canary has no node, so no
	// canary pod is created.
	// Gates past their timeout first: an unpaused one passes, and a
	// canary at its start then picks its nodes in this very pass.
	gates := gateVerdict(in, st)
	startHold := gateHold{open: true}
	if startGatesPending(in.Strategy, st) && !pausedByUser(in) {
		startHold = gatesAt(in, st, v1alpha1.WebhookConfirmStart, 0)
	}
	startHeld := startGatesPending(in.Strategy, st)
	if planErr == nil && !startHeld {
		want = plan.want()
		st.Nodes = SelectNodes(in.Candidates, want, in.Strategy.NodeAntiAffinityKeys, kept)
		plan.recordNodes(st)
		if turnedOver(previous, kept, st.Nodes) && plan.startedAt(st).Before(in.Now) {
			// A node lost or added: the canary is judged on the nodes it
			// has now, for the whole of its duration (or step).
			restartStep(st, in.Now)
		}
	}

	verdict, analysis := judge(in, st), analysisVerdict(in)
	if verdict.Action != Fail && analysis.Action == Fail {
		verdict = analysis
	}
	if nodes.Action > verdict.Action {
		verdict = nodes
	}
	if gates.Action > verdict.Action {
		verdict = gates
	}
	if in.Desired == 0 && verdict.Action != Fail {
		// No node runs the template (a node pool scaled to zero): there
		// is nothing to judge, and waiting for pods that cannot exist
		// would hold every later change. A failure (a person's, the
		// timeout's) still stands.
		st.Reason, st.Message = ReasonNothingToCanary, "no node runs the template: nothing to canary, promoted at once"
		res.Promote = true
		return res, nil
	}
	if verdict.Action == Fail {
		// Whatever the step, the whole canary fails: every canary node
		// goes back to the active template. A failed canary needs no
		// steps, so steps that cannot resolve do not hold this back.
		finishStep(st, v1alpha1.CanaryStepFailed, in.Now)
		st.Failed, st.Paused, st.Reason, st.Message = true, false, verdict.Reason, verdict.Message
		return res, nil
	}
	if Steered(SteerValidate, in.Strategy, in.Annotations, st) {
		res.Promote = true
		return res, nil
	}
	if planErr != nil {
		// Steps that no longer resolve (the cluster shrank) hold the
		// canary on the nodes it has until the spec changes; it is still
		// judged, so canaryTimeout is due all the same, and a person can
		// still validate it.
		res.RequeueAfter = timeoutLeft(in, st.StartedAt.Time)
		return res, planErr
	}
	if !startHold.open && verdict.Action != Pause {
		// Before manual validation: a manual canary is validated once it
		// runs. A pause (a gate that timed out) is told as such below.
		res.RequeueAfter = timeoutLeft(in, st.StartedAt.Time)
		return holdAtGates(st, res, startHold), nil
	}
	if plan.steps != nil && SkipRequested(in.Strategy, in.Annotations, st, st.Step) {
		return plan.next(in, st, res, v1alpha1.CanaryStepSkipped), nil
	} else if paused, reason, message := pauseOf(in, st, verdict, analysis, plan); paused {
		st.Paused, st.Reason, st.Message = true, reason, message
		res.RequeueAfter = timeoutLeft(in, st.StartedAt.Time)
		return res, nil
	}
	st.Paused, st.Reason, st.Message = false, "", ""
	// The canary asks for as many nodes as it wants, or as its candidates
	// can offer: it is judged on no fewer.
	if need := min(want, max(len(in.Candidates), 1)); len(st.Nodes) < need {
		st.Reason, st.Message = ReasonWaitingForNodes, waitingForNodes(in, len(st.Nodes), need)
		res.RequeueAfter = nodesRequeue(in, st)
		return res, nil
	}
	if wait := untilPromotable(in, plan.startedAt(st), plan.duration()); wait > 0 {
		res.RequeueAfter = wait
		return res, nil
	}
	// in.Ready judged the nodes recorded before this step: a node added
	// since is yet to be.
	if !in.Ready || !subset(st.Nodes, previous) {
		st.Reason, st.Message = "WaitingForPods", "the canary duration has elapsed; waiting for every canary pod to be available"
		return res, nil
	}
	if waiting := analysisPending(in); waiting != "" {
		st.Reason, st.Message = ReasonWaitingForAnalysis, waiting
		return res, nil
	}
	if in.Strategy.Analysis != nil && !recordedSuccessful(in) {
		// The verdict is written before the canary goes: whoever reads the
		// status (GitOps tools, dashboards, `kubectl eds`) sees the
		// analysis that promoted it.
		st.Reason, st.Message = ReasonWaitingForAnalysis, "the analysis is Successful; "+plan.going()
		res.RequeueAfter = recordVerdictDelay
		return res, nil
	}
	if hold := plan.gates(in, st); !hold.open {
		res.RequeueAfter = timeoutLeft(in, st.StartedAt.Time)
		return holdAtGates(st, res, hold), nil
	}
	return plan.next(in, st, res, v1alpha1.CanaryStepSuccessful), nil
}

// recordVerdictDelay is how long a canary whose analysis just succeeded
// waits for that verdict to be written before it is promoted.
const recordVerdictDelay = 100 * time.Millisecond

// recordedSuccessful says whether the canary's recorded status already
// holds a Successful analysis.
func recordedSuccessful(in Input) bool {
	st := in.Status
	return st != nil && st.ReplicaSet == in.ReplicaSet && st.Analysis != nil && st.Analysis.Phase == v1alpha1.AnalysisSuccessful
}

// ReadyAt is when every pod of the canary st first was available: its
// record, or now when ready says they are for the first time; nil before.
// The metric analysis measures from then on, as there is nothing to
// measure before.
func ReadyAt(st *v1alpha1.CanaryStatus, ready bool, now time.Time) *metav1.Time {
	switch {
	case st.ReadyAt != nil:
		return st.ReadyAt
	case ready:
		return &metav1.Time{Time: now}
	}
	return nil
}

// judge is Judge plus a person's explicit fail of the canary instance st.
// A canary a person paused is held where it is: only canaryTimeout still
// fails it.
func judge(in Input, st *v1alpha1.CanaryStatus) Verdict {
	startedAt := st.StartedAt.Time
	if Steered(SteerFail, in.Strategy, in.Annotations, st) {
		return Verdict{Fail, ReasonManual, "the canary was failed by a person"}
	}
	if pausedByUser(in) {
		if f := restartChecksOf(in.Strategy).fail; f != nil && f.CanaryTimeout != nil {
			return judgeFail(nil, &v1alpha1.CanaryAutoFail{CanaryTimeout: f.CanaryTimeout}, startedAt, in.Now)
		}
		return Verdict{}
	}
	return Judge(in.Pods, in.Strategy, startedAt, in.Now)
}

func pausedByUser(in Input) bool {
	return in.Strategy.Paused || in.Annotations[v1alpha1.CanaryPausedAnnotation] == "true"
}

// pauseOf says whether the canary st waits: paused by a person, by an
// analysis that cannot conclude, by autoPause (an unpause naming the canary
// overrides it, but never a missing analysis), or, in manual mode, for a
// person's validation. All of them wait for a person or for data, which is
// what GitOps tools show as suspended.
func pauseOf(in Input, st *v1alpha1.CanaryStatus, verdict, analysis Verdict, plan stepPlan) (bool, string, string) {
	switch {
	case pausedByUser(in):
		return true, ReasonPausedByUser, "the canary is paused; unpause it to continue"
	case analysis.Action == Pause:
		return true, analysis.Reason, analysis.Message
	case verdict.Action == Pause && !Steered(SteerUnpause, in.Strategy, in.Annotations, st):
		return true, verdict.Reason, verdict.Message
	case in.Strategy.ValidationMode == v1alpha1.CanaryValidationManual:
		return true, ReasonWaitingForValidation, "validate the canary to promote it"
	case plan.steps != nil && plan.steps[plan.index].Pause:
		return true, ReasonWaitingForStep, fmt.Sprintf("step %d waits for a person: skip it to go on, or validate the canary to promote it", plan.index+1)
	}
	return false, "", ""
}

// pauseTransition is the event worth telling when a canary waits for
// reason: waiting for validation is a manual canary's normal state, and
// waiting at a pause step one its step's start told, so only coming back
// to them from another pause is news; any other new reason is a new pause,
// such as a waiting manual canary that starts crash-looping.
func pauseTransition(before *v1alpha1.CanaryStatus, reason string) string {
	switch {
	case reason == ReasonWaitingForValidation || reason == ReasonWaitingForStep:
		if before.Paused && before.Reason != reason {
			return Resumed
		}
	case !before.Paused || before.Reason != reason:
		return Paused
	}
	return ""
}

// untilPromotable is how long an auto canary (or its current step) still
// has to run: its duration since startedAt, and noRestartsDuration (in
// effect, see restartChecks.noRestarts) since the last restart of a canary
// container.
func untilPromotable(in Input, startedAt time.Time, duration time.Duration) time.Duration {
	until := startedAt.Add(duration)
	if nr := restartChecksOf(in.Strategy).noRestarts(duration); nr > 0 {
		if last := lastRestart(in.Pods); last.Add(nr).After(until) {
			until = last.Add(nr)
		}
	}
	return until.Sub(in.Now)
}

// timeoutLeft is when canaryTimeout will fail a canary that waits.
func timeoutLeft(in Input, startedAt time.Time) time.Duration {
	if f := restartChecksOf(in.Strategy).fail; f != nil && f.CanaryTimeout != nil {
		return max(time.Second, startedAt.Add(f.CanaryTimeout.Duration).Sub(in.Now)+time.Second)
	}
	return 0
}

// lastRestart is when a canary container last ended, zero if never.
func lastRestart(pods []*corev1.Pod) time.Time {
	var last time.Time
	for _, pod := range pods {
		for _, c := range containerStatuses(pod) {
			if t := c.LastTerminationState.Terminated; t != nil && t.FinishedAt.After(last) {
				last = t.FinishedAt.Time
			}
		}
	}
	return last
}

// RetryToken joins the declarative and the annotation retry tokens, so a
// change of either is a new retry. Without a canary strategy only the
// annotation can ask for one.
func RetryToken(strategy *v1alpha1.CanaryStrategy, annotations map[string]string) string {
	spec, ann := "", annotations[v1alpha1.CanaryRetryAnnotation]
	if strategy != nil {
		spec = strategy.Retry
	}
	if spec == "" && ann == "" {
		return ""
	}
	return spec + "/" + ann
}

func mustParse(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(fmt.Sprintf("canary: default duration %q: %v", s, err))
	}
	return d
}
