// Package bake decides, as a pure function of the recorded status, when the
// analysis of a domain's bake judges, whether it passed, and what the
// ExtendedDaemonSet says of it. With a canary analysis and a Sequential
// topology with domainBakeTime, the canary's metrics keep judging the
// updated pods while a domain bakes; the planner (controllers/rollout)
// starts the next domain only once the bake's time is over and its verdict
// is recorded as passed. Measuring is the controller's business.
package bake

import (
	"fmt"
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// AnalysisOf is the analysis that judges the bakes of eds: the canary's,
// with a Sequential topology that bakes; nil when bakes are not judged.
func AnalysisOf(eds *v1alpha1.ExtendedDaemonSet) *v1alpha1.CanaryAnalysis {
	t, c := eds.Spec.Strategy.RollingUpdate.Topology, eds.Spec.Strategy.Canary
	if t == nil || c == nil || c.Analysis == nil || t.Order == v1alpha1.TopologyParallel ||
		t.DomainBakeTime == nil || t.DomainBakeTime.Duration <= 0 {
		return nil
	}
	return c.Analysis
}

// Input is what one step of a bake's judgement is decided from.
type Input struct {
	// Analysis judges the bakes; nil when they are not judged.
	Analysis *v1alpha1.CanaryAnalysis
	// ReplicaSet is the active replica set and Domains its status.domains,
	// nil until its status describes it as the active one.
	ReplicaSet string
	Domains    []v1alpha1.DomainStatus
	// Status is the bake recorded so far, nil when none.
	Status *v1alpha1.DomainBakeStatus
	// RetryToken is the retry asked for now (canary.RetryToken), and
	// LastHandledRetry the one already acted upon or seen before a failure.
	RetryToken, LastHandledRetry string
	Now                          time.Time
}

// Decision is what to record, and whether to measure.
type Decision struct {
	// Status is the bake to record; nil when bakes are not judged.
	Status *v1alpha1.DomainBakeStatus
	// Measure: the analysis of Status judges now; the measurements that
	// are due count from Status.StartedAt.
	Measure bool
	// LastHandledRetry is the retry token handled once this step is
	// recorded.
	LastHandledRetry string
	// Retried: a retry cleared a failed bake, whose analysis starts over.
	Retried bool
}

// Step decides the bake's judgement: a bake of another replica set is
// forgotten (a new template, a rollback); a failed bake stays failed, and
// nothing is measured, until a retry clears it; a domain that starts
// baking gets an analysis of its own; and the baking domain's analysis
// measures until its bake passed. A retry token seen while nothing failed
// is handled: it can only retry a failure it came after.
func Step(in Input) Decision {
	d := Decision{LastHandledRetry: in.LastHandledRetry}
	if in.Analysis == nil {
		return d
	}
	st := in.Status.DeepCopy()
	if st != nil && st.ReplicaSet != in.ReplicaSet {
		st = nil
	}
	retry := canary.RetryAsked(in.RetryToken, in.LastHandledRetry)
	handled := canary.RetryHandled(in.RetryToken, in.LastHandledRetry)
	switch {
	case Failed(st) && !retry:
		d.Status = st
		return d
	case Failed(st):
		st.Analysis, st.StartedAt = nil, metav1.NewTime(in.Now)
		d.LastHandledRetry, d.Retried = handled, true
	case retry:
		d.LastHandledRetry = handled
	}
	baking := bakingIn(in.Domains)
	switch {
	case baking == nil:
		// Nothing bakes: the verdict stays as it was, measured no more.
		d.Status = st
		return d
	case st == nil || st.Domain != baking.Name:
		passed := ""
		if st != nil {
			passed = st.PassedThrough
		}
		st = &v1alpha1.DomainBakeStatus{ReplicaSet: in.ReplicaSet, Domain: baking.Name,
			StartedAt: metav1.NewTime(in.Now), PassedThrough: passed}
		if baking.BakingSince != nil && !d.Retried {
			st.StartedAt = *baking.BakingSince
		}
	}
	d.Status, d.Measure = st, !Passed(st, st.Domain)
	return d
}

// Settle records the bake as passed once its analysis is Successful and
// the baking domain's bake time is over (every pod available since
// bakingSince, for bakeTime). It returns when time alone passes it: the
// end of the bake time, 0 when nothing is left to wait for.
func Settle(st *v1alpha1.DomainBakeStatus, bakingSince time.Time, bakeTime time.Duration, now time.Time) time.Duration {
	if st == nil || st.Analysis == nil || st.Analysis.Phase != v1alpha1.AnalysisSuccessful || Passed(st, st.Domain) {
		return 0
	}
	if end := bakingSince.Add(bakeTime); now.Before(end) {
		return end.Sub(now)
	}
	st.PassedThrough = st.Domain
	return 0
}

// Failed reports whether the bake's analysis halts the rollout: it failed,
// erred or stayed inconclusive beyond its limits. A nodeHealth regression
// whose onRegression is Pause halts it the same way: a failed bake rolls
// nothing back and waits for a person (a retry, a new template), which is
// already the pause that setting asks a canary for.
func Failed(st *v1alpha1.DomainBakeStatus) bool {
	if st == nil || st.Analysis == nil {
		return false
	}
	switch st.Analysis.Phase {
	case v1alpha1.AnalysisFailed, v1alpha1.AnalysisError, v1alpha1.AnalysisInconclusive:
		return true
	}
	return false
}

// Passed reports whether the bake of domain passed, as the planner reads
// it: the domain is no later than the last one that passed.
func Passed(st *v1alpha1.DomainBakeStatus, domain string) bool {
	return st != nil && st.PassedThrough != "" && rollout.CompareDomains(domain, st.PassedThrough) <= 0
}

// PassedThrough is the planner's input for replicaSet: the last domain
// whose bake passed, empty when none did or st is another replica set's.
func PassedThrough(st *v1alpha1.DomainBakeStatus, replicaSet string) string {
	if st == nil || st.ReplicaSet != replicaSet {
		return ""
	}
	return st.PassedThrough
}

// Verdicts copies domains with the verdict of each one's bake: Successful
// once passed, the analysis's phase for the domain judged now (Pending
// before its first measurement), empty otherwise.
func Verdicts(domains []v1alpha1.DomainStatus, st *v1alpha1.DomainBakeStatus) []v1alpha1.DomainStatus {
	if len(domains) == 0 {
		return nil
	}
	out := make([]v1alpha1.DomainStatus, len(domains))
	for i, d := range domains {
		out[i] = *d.DeepCopy()
		switch {
		case st == nil:
		case Passed(st, d.Name):
			out[i].Analysis = v1alpha1.AnalysisSuccessful
		case d.Name == st.Domain && st.Analysis != nil && st.Analysis.Phase != "":
			out[i].Analysis = st.Analysis.Phase
		case d.Name == st.Domain:
			out[i].Analysis = v1alpha1.AnalysisPending
		}
	}
	return out
}

// Message says where a bake stands, for the Ready and Reconciling
// conditions: the domain, the time left of its bake in whole minutes
// (rounded up, so that a status written now and then reads the same
// between two writes) and, judged, its analysis. It returns "" when no
// domain bakes, and when the message changes by time alone.
func Message(domains []v1alpha1.DomainStatus, st *v1alpha1.DomainBakeStatus, bakeTime time.Duration, now time.Time) (string, time.Duration) {
	baking := bakingIn(domains)
	if baking == nil {
		return "", 0
	}
	msg := "baking " + baking.Name
	var next time.Duration
	if baking.BakingSince != nil {
		left := baking.BakingSince.Add(bakeTime).Sub(now)
		if left > 0 {
			minutes := math.Ceil(left.Minutes())
			msg += fmt.Sprintf(": %dm left", int(minutes))
			next = left - time.Duration(minutes-1)*time.Minute
		} else {
			msg += ": bake time over"
		}
	}
	switch {
	case st == nil || st.Domain != baking.Name:
	case Passed(st, baking.Name):
		msg += ", analysis Successful"
	case st.Analysis == nil || st.Analysis.Phase == "":
		msg += ", analysis Pending"
	default:
		msg += ", analysis " + string(st.Analysis.Phase)
	}
	return msg, next
}

// FailedMessage says why a failed bake halts the rollout and what resumes
// it, naming the domain and the failing metrics.
func FailedMessage(st *v1alpha1.DomainBakeStatus) string {
	return fmt.Sprintf("the bake analysis of domain %s is %s: %s; no further domain starts and nothing is rolled back "+
		"until the template changes or a retry is asked for", st.Domain, st.Analysis.Phase, st.Analysis.Message)
}

func bakingIn(domains []v1alpha1.DomainStatus) *v1alpha1.DomainStatus {
	for i := range domains {
		if domains[i].State == v1alpha1.DomainBaking {
			return &domains[i]
		}
	}
	return nil
}
