package canary

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// fuzzCandidates reads up to 64 candidates from the fuzzer's bytes, two a
// candidate: one of flags (zone, rack, cordoned, not Ready, whether the
// canary already ran there) and one of restarts, which flag 0x80 scales to the edges of
// int32. The previous choice follows the candidates' order rotated by
// rotate, with a repeated name and a vanished node now and then.
func fuzzCandidates(data []byte, rotate int) (candidates []Candidate, previous []string) {
	for i := 0; i+1 < len(data) && len(candidates) < 64; i += 2 {
		flags, r := data[i], data[i+1]
		c := Candidate{Name: fmt.Sprintf("node-%02d", len(candidates)), Labels: map[string]string{}}
		if zone := flags & 0x03; zone != 0x03 {
			c.Labels["zone"] = string(rune('a' + zone))
		}
		if flags&0x04 != 0 {
			c.Labels["rack"] = "r1"
		}
		if flags&0x08 != 0 {
			c.Unhealthy = "the node is cordoned"
		}
		if flags&0x40 != 0 {
			c.Unhealthy, c.NotReady, c.NotReadySince = "the node is not Ready", true, start.Add(-time.Minute)
		}
		switch flags & 0x30 {
		case 0x10:
			previous = append(previous, c.Name)
		case 0x20:
			previous = append(previous, c.Name, c.Name)
		case 0x30:
			previous = append(previous, fmt.Sprintf("gone-%02d", len(candidates)))
		}
		c.Restarts = int32(r)
		if flags&0x80 != 0 {
			c.Restarts = (int32(r) - 128) << 24
		}
		candidates = append(candidates, c)
	}
	if len(previous) > 0 {
		k := rotate % len(previous)
		if k < 0 {
			k += len(previous)
		}
		previous = append(previous[k:], previous[:k]...)
	}
	return candidates, previous
}

// checkSelection returns what breaks SelectNodes's promises: sorted and
// unique names of candidates, at most want; the earliest previous nodes
// still candidates kept; new picks healthy; as many as the candidates
// allow.
func checkSelection(candidates []Candidate, want int, previous, got []string) []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	byName := map[string]Candidate{}
	for _, c := range candidates {
		byName[c.Name] = c
	}
	if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
		fail("not sorted and unique: %v", got)
	}
	if len(got) > max(want, 0) {
		fail("%d nodes chosen, %d wanted", len(got), want)
	}
	var kept []string
	for _, name := range previous {
		if _, ok := byName[name]; ok && len(kept) < want && !slices.Contains(kept, name) {
			kept = append(kept, name)
		}
	}
	healthy := 0
	for _, c := range candidates {
		if c.Unhealthy == "" && !slices.Contains(kept, c.Name) {
			healthy++
		}
	}
	for _, name := range kept {
		if !slices.Contains(got, name) {
			fail("%s was chosen before and is still a candidate, yet not kept", name)
		}
	}
	for _, name := range got {
		c, ok := byName[name]
		switch {
		case !ok:
			fail("%s is not a candidate", name)
		case c.Unhealthy != "" && !slices.Contains(kept, name):
			fail("%s is newly picked, yet unhealthy", name)
		}
	}
	if wantLen := max(0, min(want, len(kept)+healthy)); len(got) != wantLen {
		fail("%d nodes chosen, want %d: %d kept and %d healthy others", len(got), wantLen, len(kept), healthy)
	}
	return errs
}

// FuzzSelectNodes checks the canary's choice of nodes on candidates the
// fuzzer draws, and that the choice depends on the candidates and not on
// the order the cache lists them in.
func FuzzSelectNodes(f *testing.F) {
	f.Add([]byte{}, 1, uint8(0), 0)
	f.Add([]byte{0x00, 0, 0x01, 0, 0x02, 0, 0x00, 1, 0x01, 1, 0x02, 1}, 3, uint8(1), 0)
	f.Add([]byte{0x18, 0, 0x08, 0, 0x00, 5, 0x30, 0, 0x20, 2, 0x11, 9}, 2, uint8(3), 1)
	f.Add([]byte{0x80, 0xff, 0x80, 0x00, 0x80, 0x7f, 0x00, 3}, 2, uint8(0), 0)
	f.Fuzz(func(t *testing.T, data []byte, want int, keyBits uint8, rotate int) {
		candidates, previous := fuzzCandidates(data, rotate)
		var keys []string
		for i, k := range []string{"zone", "rack", "absent"} {
			if keyBits&(1<<i) != 0 {
				keys = append(keys, k)
			}
		}
		before := slices.Clone(candidates)
		got := SelectNodes(candidates, want, keys, previous)
		if !reflect.DeepEqual(before, candidates) {
			t.Fatalf("SelectNodes modified its candidates")
		}
		if errs := checkSelection(candidates, want, previous, got); len(errs) > 0 {
			t.Fatalf("SelectNodes(%d candidates, want %d, keys %v, previous %v) = %v:\n  %s",
				len(candidates), want, keys, previous, got, strings.Join(errs, "\n  "))
		}
		reversed := slices.Clone(candidates)
		slices.Reverse(reversed)
		if again := SelectNodes(reversed, want, keys, previous); !slices.Equal(again, got) {
			t.Fatalf("SelectNodes depends on the order of the candidates: %v, reversed %v", got, again)
		}
	})
}

// FuzzCount checks that canary replicas resolve to a count of nodes
// between one and desired, and that only a malformed string is an error.
func FuzzCount(f *testing.F) {
	for _, s := range []string{"1", "10%", "100%", "0%", "-3", "150%", "ten%", "%", "2147483648", "9999999999%"} {
		f.Add(s, 10)
	}
	f.Add("50%", 0)
	f.Add("50%", -1)
	f.Fuzz(func(t *testing.T, replicas string, desired int) {
		v := intstr.Parse(replicas)
		n, err := Count(&v, desired)
		switch {
		case err != nil && v.Type != intstr.String:
			t.Fatalf("Count(%s, %d): %v for a number", v.String(), desired, err)
		case err != nil:
		case desired <= 0 && n != 0:
			t.Fatalf("Count(%s, %d) = %d without a node", v.String(), desired, n)
		case desired > 0 && (n < 1 || n > desired):
			t.Fatalf("Count(%s, %d) = %d, want between 1 and %d", v.String(), desired, n, desired)
		}
	})
}

// stepFuzz is one canary step the fuzzer draws: a bit of flags per
// setting and person's action, and the times and counts it uses.
type stepFuzz struct {
	flags                                                 uint64
	replicas                                              string
	startedAgo, duration, noRestarts, restartAgo, timeout int64
	restartCount                                          int32
	nodes                                                 []byte
}

func (s stepFuzz) bit(i int) bool { return s.flags>>i&1 == 1 }

// optional is a pointer to on, or nil when unset.
func optional(set, on bool) *bool {
	if !set {
		return nil
	}
	return &on
}

// fuzzRS is the replica set of the canary being stepped.
const fuzzRS = "rs-2"

var fuzzPhases = []v1alpha1.AnalysisPhase{"", v1alpha1.AnalysisPending, v1alpha1.AnalysisRunning, v1alpha1.AnalysisSuccessful,
	v1alpha1.AnalysisFailed, v1alpha1.AnalysisInconclusive, v1alpha1.AnalysisError}

func (s stepFuzz) strategy() *v1alpha1.CanaryStrategy {
	st := &v1alpha1.CanaryStrategy{}
	if s.bit(0) {
		v := intstr.Parse(s.replicas)
		st.Replicas = &v
	}
	if s.bit(1) {
		st.Duration = dur(time.Duration(s.duration))
	}
	if s.bit(2) {
		st.NoRestartsDuration = dur(time.Duration(s.noRestarts))
	}
	if s.bit(3) {
		st.AutoFail = &v1alpha1.CanaryAutoFail{Enabled: optional(s.bit(4), s.bit(5))}
		if s.bit(6) {
			st.AutoFail.CanaryTimeout = dur(time.Duration(s.timeout))
		}
		if s.bit(7) {
			st.AutoFail.MaxRestarts = ptr.To(s.restartCount)
		}
		if s.bit(8) {
			st.AutoFail.MaxRestartsDuration = dur(time.Duration(s.noRestarts))
		}
	}
	if s.bit(9) {
		st.AutoPause = &v1alpha1.CanaryAutoPause{Enabled: optional(s.bit(10), s.bit(11))}
		if s.bit(12) {
			st.AutoPause.MaxRestarts = ptr.To(s.restartCount / 2)
		}
		if s.bit(13) {
			st.AutoPause.MaxSlowStartDuration = dur(time.Duration(s.duration / 2))
		}
	}
	if s.bit(14) {
		st.ValidationMode = v1alpha1.CanaryValidationManual
	}
	st.Paused = s.bit(15)
	for bit, field := range map[int]*string{16: &st.Validate, 17: &st.Fail, 18: &st.Unpause} {
		if s.bit(bit) {
			*field = fuzzRS
		}
	}
	if s.bit(19) {
		st.Retry = "again"
	}
	if s.bit(20) {
		st.NodeAntiAffinityKeys = []string{"zone"}
	}
	if s.bit(21) {
		st.Analysis = &v1alpha1.CanaryAnalysis{}
	}
	return st
}

func (s stepFuzz) annotations() map[string]string {
	a := map[string]string{}
	for bit, kv := range map[int][2]string{
		22: {v1alpha1.CanaryRetryAnnotation, "1"},
		23: {v1alpha1.CanaryPausedAnnotation, "true"},
		24: {v1alpha1.CanaryValidatedAnnotation, fuzzRS},
		25: {v1alpha1.CanaryFailedAnnotation, fuzzRS},
		26: {v1alpha1.CanaryUnpausedAnnotation, fuzzRS},
	} {
		if s.bit(bit) {
			a[kv[0]] = kv[1]
		}
	}
	return a
}

// analysisOf is the analysis in bits first to first+2: one of the phases,
// or none.
func (s stepFuzz) analysisOf(first int) *v1alpha1.AnalysisStatus {
	i := int(s.flags >> first & 7)
	if i >= len(fuzzPhases) {
		return nil
	}
	return &v1alpha1.AnalysisStatus{Phase: fuzzPhases[i], Message: "measured " + string(fuzzPhases[i])}
}

// pod is the canary's pod: one container, restarted restartCount times,
// last at restartAgo when bit 44 says so, running or waiting for a reason
// of bits 42 and 43.
func (s stepFuzz) pod(now time.Time) *corev1.Pod {
	return canaryPod(fuzzRS+"-x", func(p *corev1.Pod) {
		p.CreationTimestamp = metav1.NewTime(now.Add(-time.Duration(s.startedAgo)))
		if s.bit(46) {
			p.Status.Phase = corev1.PodPending
		}
		c := &p.Status.ContainerStatuses[0]
		c.RestartCount = s.restartCount
		switch s.flags >> 42 & 3 {
		case 1:
			c.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
		case 2:
			c.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull"}}
		case 3:
			c.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error"}}
		}
		if s.bit(44) {
			c.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{
				FinishedAt: metav1.NewTime(now.Add(-time.Duration(s.restartAgo))),
			}
			if s.bit(45) {
				c.LastTerminationState.Terminated.Reason = "OOMKilled"
			}
		}
	})
}

func (s stepFuzz) input() Input {
	now := start
	strategy := s.strategy()
	in := Input{
		Strategy:    strategy,
		Annotations: s.annotations(),
		ReplicaSet:  fuzzRS, TemplateHash: "h2",
		Analysis: s.analysisOf(27),
		Ready:    s.bit(41),
		Now:      now,
	}
	var previous []string
	in.Candidates, previous = fuzzCandidates(s.nodes, int(s.flags>>50&0xff))
	in.Desired = len(in.Candidates) + int(s.flags>>47&3)
	in.Pods = []*corev1.Pod{s.pod(now)}
	if !s.bit(30) {
		st := &v1alpha1.CanaryStatus{ReplicaSet: fuzzRS, Nodes: previous, Failed: s.bit(32), Paused: s.bit(33),
			Analysis: s.analysisOf(58)}
		if s.bit(31) {
			st.ReplicaSet = "rs-1"
		}
		if st.Paused {
			st.Reason = []string{ReasonPausedByUser, ReasonWaitingForValidation, "CrashLoopBackOff", v1alpha1.ReasonAnalysisError}[s.flags>>34&3]
		}
		if !s.bit(36) {
			st.StartedAt = &metav1.Time{Time: now.Add(-time.Duration(s.startedAgo))}
		}
		if s.bit(37) {
			st.ReadyAt = &metav1.Time{Time: now.Add(-time.Duration(s.startedAgo / 2))}
		}
		in.Status = st
	}
	switch {
	case s.bit(39):
		in.LastHandledRetry = RetryToken(strategy, in.Annotations)
	case s.bit(40):
		in.LastHandledRetry = "before/"
	}
	return in
}

var transitions = []string{"", Started, Promoted, Paused, Resumed, Failed, Retried}

// checkStep returns what breaks Step's promises in res: a failure is
// sticky until retried and a person's fail always fails; a promotion is a
// person's validation or an auto canary whose duration and
// noRestartsDuration have elapsed, whose pods are all available and whose
// analysis, when it has one, succeeded and was recorded so; the nodes are
// candidates, as many as wanted at most.
func checkStep(in Input, res Result) []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	st, strategy := res.Status, in.Strategy
	if st == nil || st.ReplicaSet != in.ReplicaSet || st.StartedAt == nil {
		return []string{fmt.Sprintf("status %+v is not of a started canary of %s", st, in.ReplicaSet)}
	}
	if !slices.Contains(transitions, res.Transition) || res.Promote != (res.Transition == Promoted) {
		fail("transition %q with promote %t", res.Transition, res.Promote)
	}
	if res.RequeueAfter < 0 {
		fail("requeue after %s", res.RequeueAfter)
	}
	token := RetryToken(strategy, in.Annotations)
	if was := in.Status; was != nil && was.ReplicaSet == in.ReplicaSet && was.Failed && (token == "" || token == in.LastHandledRetry) && !st.Failed {
		fail("a failed canary is no longer failed, yet no new retry token asked for it (token %q, handled %q)", token, in.LastHandledRetry)
	}
	if Steered(SteerFail, strategy, in.Annotations, st) && !st.Failed {
		fail("a person failed the canary, yet it is not failed")
	}
	if res.Promote {
		errs = append(errs, checkPromotion(in, st)...)
	}
	return errs
}

func checkPromotion(in Input, st *v1alpha1.CanaryStatus) []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	strategy := in.Strategy
	if st.Failed {
		fail("promotes a failed canary")
	}
	if Steered(SteerValidate, strategy, in.Annotations, st) {
		return errs
	}
	if in.Desired == 0 {
		// No node runs the template: nothing to canary.
		if st.Reason != ReasonNothingToCanary {
			fail("promotes a template no node runs without saying so (reason %q)", st.Reason)
		}
		return errs
	}
	// Judged on as many nodes as it asked for, or its candidates offer,
	// none of them NotReady.
	if want, _ := Count(strategy.Replicas, in.Desired); len(st.Nodes) < min(want, len(in.Candidates)) {
		fail("promotes on %d nodes, %d wanted of %d candidates", len(st.Nodes), want, len(in.Candidates))
	}
	for _, c := range in.Candidates {
		if c.NotReady && slices.Contains(st.Nodes, c.Name) {
			fail("promotes with canary node %s NotReady", c.Name)
		}
	}
	duration := defaultDuration
	if strategy.Duration != nil {
		duration = strategy.Duration.Duration
	}
	if ran := in.Now.Sub(st.StartedAt.Time); ran < duration {
		fail("promotes after %s, before the canary duration %s", ran, duration)
	}
	if nr := restartChecksOf(strategy).noRestarts(duration); nr > 0 {
		for _, c := range in.Pods[0].Status.ContainerStatuses {
			if last := c.LastTerminationState.Terminated; last != nil && in.Now.Sub(last.FinishedAt.Time) < nr {
				fail("promotes %s after a restart, before noRestartsDuration %s", in.Now.Sub(last.FinishedAt.Time), nr)
			}
		}
	}
	switch {
	case !in.Ready:
		fail("promotes before every canary pod is available")
	case strategy.Paused || in.Annotations[v1alpha1.CanaryPausedAnnotation] == "true":
		fail("promotes a canary a person paused")
	case strategy.ValidationMode == v1alpha1.CanaryValidationManual:
		fail("promotes a manual canary no one validated")
	}
	if strategy.Analysis != nil {
		recorded := in.Status != nil && in.Status.ReplicaSet == in.ReplicaSet && in.Status.Analysis != nil &&
			in.Status.Analysis.Phase == v1alpha1.AnalysisSuccessful
		if in.Analysis == nil || in.Analysis.Phase != v1alpha1.AnalysisSuccessful || !recorded {
			fail("promotes with analysis %+v, recorded %+v", in.Analysis, in.Status)
		}
	}
	return errs
}

// FuzzStep steps canaries the fuzzer draws: any mix of settings, a
// person's actions, recorded state, times and a pod's restarts. Step must
// not panic, must not modify its input, must decide the same twice, and
// must keep the promises checkStep lists.
func FuzzStep(f *testing.F) {
	minute, hour := int64(time.Minute), int64(time.Hour)
	nodes := []byte{0x00, 0, 0x11, 0, 0x02, 3, 0x08, 0}
	for _, flags := range []uint64{
		0,                                    // a new canary, every setting unset
		1<<30 | 1<<1,                         // no status yet, a duration
		1<<1 | 1<<41,                         // running, ready, past its duration
		1<<1 | 1<<2 | 1<<41 | 1<<44,          // a recent restart holds it back
		1<<21 | 1<<41 | 3<<27 | 3<<58,        // analysis successful and recorded
		1<<21 | 1<<41 | 3<<27 | 7<<58,        // analysis successful, not recorded yet
		1<<32 | 1<<19 | 1<<39,                // failed, the retry token handled
		1<<32 | 1<<22,                        // failed, a new retry token
		1<<3 | 1<<6 | 1<<15,                  // paused, then timed out
		1<<3 | 1<<7 | 1<<8 | 1<<42 | 1<<44,   // crash-looping under autoFail
		1<<9 | 1<<12 | 1<<13 | 2<<42 | 1<<46, // cannot start under autoPause
		1<<14 | 1<<24,                        // manual, validated
		1<<17 | 1<<16,                        // failed and validated at once
		1<<0 | 1<<36,                         // a recorded canary without a start
		1<<31 | 1<<32,                        // an older canary failed
	} {
		f.Add(flags, "2", 20*minute, 10*minute, 5*minute, 3*minute, hour, int32(2), nodes)
	}
	f.Add(uint64(1), "ten%", int64(0), int64(-1), int64(0), int64(0), int64(0), int32(-1), []byte{})
	f.Fuzz(func(t *testing.T, flags uint64, replicas string, startedAgo, duration, noRestarts, restartAgo, timeout int64,
		restartCount int32, nodes []byte,
	) {
		s := stepFuzz{flags, replicas, startedAgo, duration, noRestarts, restartAgo, timeout, restartCount, nodes}
		in := s.input()
		pristine := s.input()
		res, err := Step(in)
		if !reflect.DeepEqual(in, pristine) {
			t.Fatalf("Step modified its input")
		}
		if again, againErr := Step(in); !reflect.DeepEqual(again, res) || fmt.Sprint(againErr) != fmt.Sprint(err) {
			t.Fatalf("Step is not deterministic: %+v, %v then %+v, %v", res, err, again, againErr)
		}
		if err != nil {
			if r := in.Strategy.Replicas; r == nil || r.Type != intstr.String {
				t.Fatalf("Step: %v, yet replicas is %v", err, r)
			}
			return
		}
		errs := checkStep(in, res)
		if !res.Status.Failed && in.Desired > 0 {
			want, _ := Count(in.Strategy.Replicas, in.Desired)
			errs = append(errs, checkSelection(in.Candidates, want, keptNodesOf(in), res.Status.Nodes)...)
		}
		if len(errs) > 0 {
			t.Fatalf("flags %#x: %s\nresult %+v", flags, strings.Join(errs, "\n  "), res)
		}
	})
}

// nodesOf is the canary's previous choice, when the step keeps it: not
// that of an older canary, nor of a failed one retried now.
func nodesOf(in Input) []string {
	if st := in.Status; st != nil && st.ReplicaSet == in.ReplicaSet && !st.Failed {
		return st.Nodes
	}
	return nil
}

// keptNodesOf is the canary's previous choice a step keeps: nodesOf, less
// the nodes NotReady (the fuzzer's canary pod runs on no node, so none of
// them is the canary's doing) unless a person holds the canary.
func keptNodesOf(in Input) []string {
	nodes := nodesOf(in)
	if pausedByUser(in) {
		return nodes
	}
	return slices.DeleteFunc(slices.Clone(nodes), func(name string) bool {
		i := slices.IndexFunc(in.Candidates, func(c Candidate) bool { return c.Name == name })
		return i >= 0 && in.Candidates[i].NotReady
	})
}
