package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

const (
	// MaxMeasurements is how many measurements of a metric the status keeps.
	MaxMeasurements = 10
	// MaxQueryLength bounds the query kept with the newest measurement: a
	// pod regex at thousands of pods is far longer than a status should be.
	MaxQueryLength = 2048
	// maxMessageLength bounds a measurement's message in the status.
	maxMessageLength = 1024

	defaultConsecutiveErrorLimit = 4
)

// limits are the spec's tolerances with their defaults applied, and the
// metrics no tolerance applies to because their spec is wrong.
type limits struct {
	failure, inconclusive, consecutiveError int32
	// specErrors are why metrics can never be measured, by name.
	specErrors map[string]error
}

func limitsOf(spec *v1alpha1.CanaryAnalysis) limits {
	l := limits{consecutiveError: defaultConsecutiveErrorLimit, specErrors: specErrorsOf(spec)}
	if spec.FailureLimit != nil {
		l.failure = *spec.FailureLimit
	}
	if spec.InconclusiveLimit != nil {
		l.inconclusive = *spec.InconclusiveLimit
	}
	if spec.ConsecutiveErrorLimit != nil {
		l.consecutiveError = *spec.ConsecutiveErrorLimit
	}
	return l
}

// Record folds new measurements, by metric name, into a copy of st (nil
// means empty) and recomputes each metric's counters and phase and the
// overall phase and message. Measurements of metrics the spec does not have
// are ignored, and so are the results of metrics it no longer has. The
// status stays small whatever the number of pods: at most MaxMeasurements
// measurements per metric, newest last, and only the newest keeps its query,
// cut to MaxQueryLength bytes.
func Record(spec *v1alpha1.CanaryAnalysis, st *v1alpha1.AnalysisStatus, ms map[string]v1alpha1.Measurement) *v1alpha1.AnalysisStatus {
	previous := map[string]*v1alpha1.MetricResult{}
	if st != nil {
		for i := range st.Metrics {
			previous[st.Metrics[i].Name] = &st.Metrics[i]
		}
	}
	l := limitsOf(spec)
	out := &v1alpha1.AnalysisStatus{Metrics: make([]v1alpha1.MetricResult, 0, len(spec.Metrics))}
	for _, metric := range spec.Metrics {
		result := v1alpha1.MetricResult{Name: metric.Name}
		if p := previous[metric.Name]; p != nil {
			result = *p.DeepCopy()
		}
		if m, ok := ms[metric.Name]; ok {
			fold(&result, m)
		}
		result.Phase = metricPhase(&result, l, l.specErrors[metric.Name])
		out.Metrics = append(out.Metrics, result)
	}
	out.Phase, out.Message = overall(spec, out.Metrics, l)
	return out
}

// fold adds one measurement to a metric's result.
func fold(r *v1alpha1.MetricResult, m v1alpha1.Measurement) {
	r.Count = counted(r.Count)
	switch m.Phase {
	case v1alpha1.AnalysisSuccessful:
		r.Successful = counted(r.Successful)
	case v1alpha1.AnalysisFailed:
		r.Failed = counted(r.Failed)
	case v1alpha1.AnalysisInconclusive:
		r.Inconclusive = counted(r.Inconclusive)
	case v1alpha1.AnalysisError:
		r.Error = counted(r.Error)
	}
	r.ConsecutiveError = nextRun(r.ConsecutiveError, m.Phase == v1alpha1.AnalysisError)
	r.ConsecutiveInconclusive = nextRun(r.ConsecutiveInconclusive, m.Phase == v1alpha1.AnalysisInconclusive)

	m.Message = Truncate(m.Message, maxMessageLength)
	m.Query = Truncate(m.Query, MaxQueryLength)
	m.Nodes = boundedEvidence(m.Nodes)
	r.Message = m.Message
	for i := range r.Measurements {
		r.Measurements[i].Query = ""
	}
	r.Measurements = append(r.Measurements, m)
	if extra := len(r.Measurements) - MaxMeasurements; extra > 0 {
		r.Measurements = append(r.Measurements[:0:0], r.Measurements[extra:]...)
	}
	keepEvidence(r.Measurements)
}

// boundedEvidence is at most maxNodesNamed nodes of evidence, each message
// at most maxEvidenceMessage bytes, as the API allows.
func boundedEvidence(nodes []v1alpha1.NodeEvidence) []v1alpha1.NodeEvidence {
	if len(nodes) == 0 {
		return nil
	}
	out := make([]v1alpha1.NodeEvidence, 0, min(len(nodes), maxNodesNamed))
	for _, e := range nodes[:min(len(nodes), maxNodesNamed)] {
		e.Message = Truncate(e.Message, maxEvidenceMessage)
		out = append(out, e)
	}
	return out
}

// keepEvidence keeps the per-node evidence of the newest measurement and of
// the newest Failed one, which explains the failure the metric's message
// names once later measurements passed; older evidence goes, so that ten
// measurements of many nodeHealth metrics stay well within a status.
func keepEvidence(ms []v1alpha1.Measurement) {
	newestFailed := -1
	for i := range ms {
		if ms[i].Phase == v1alpha1.AnalysisFailed {
			newestFailed = i
		}
	}
	for i := range ms[:len(ms)-1] {
		if i != newestFailed {
			ms[i].Nodes = nil
		}
	}
}

func nextRun(run int32, continues bool) int32 {
	if continues {
		return counted(run)
	}
	return 0
}

// counted is n plus one, held at the largest int32: a counter that wrapped
// round to negative would turn a sticky Failed, or a run of errors, back
// into a metric that may pass.
func counted(n int32) int32 {
	if n == math.MaxInt32 {
		return n
	}
	return n + 1
}

// metricPhase is a metric's verdict so far. Failed is sticky: the Failed
// counter only grows. A spec error is Error at once, measured or not, since
// measuring again never helps; it lasts until the spec is fixed. Other
// errors and Inconclusive last only as long as their run, so a canary
// paused for missing data resumes when the data returns.
func metricPhase(r *v1alpha1.MetricResult, l limits, specErr error) v1alpha1.AnalysisPhase {
	switch {
	case r.Failed > l.failure:
		return v1alpha1.AnalysisFailed
	case specErr != nil:
		return v1alpha1.AnalysisError
	case r.Count == 0:
		return v1alpha1.AnalysisPending
	case r.ConsecutiveError > l.consecutiveError:
		return v1alpha1.AnalysisError
	case r.ConsecutiveInconclusive > l.inconclusive:
		return v1alpha1.AnalysisInconclusive
	case newest(r) != nil && newest(r).Phase == v1alpha1.AnalysisSuccessful:
		return v1alpha1.AnalysisSuccessful
	}
	return v1alpha1.AnalysisRunning
}

func newest(r *v1alpha1.MetricResult) *v1alpha1.Measurement {
	if len(r.Measurements) == 0 {
		return nil
	}
	return &r.Measurements[len(r.Measurements)-1]
}

// overall is the analysis's verdict from the metrics that decide, the
// others being dry runs, and a message naming the deciding metrics.
func overall(spec *v1alpha1.CanaryAnalysis, results []v1alpha1.MetricResult, l limits) (v1alpha1.AnalysisPhase, string) {
	var deciding, dryRun []*v1alpha1.MetricResult
	byPhase := map[v1alpha1.AnalysisPhase][]*v1alpha1.MetricResult{}
	for i, metric := range spec.Metrics {
		r := &results[i]
		if spec.DryRun || metric.DryRun {
			dryRun = append(dryRun, r)
			continue
		}
		deciding = append(deciding, r)
		byPhase[r.Phase] = append(byPhase[r.Phase], r)
	}
	dryRunNote := dryRunSummary(dryRun, l)

	if len(deciding) == 0 {
		if len(dryRun) == 0 {
			return v1alpha1.AnalysisSuccessful, "the analysis has no metrics"
		}
		return v1alpha1.AnalysisSuccessful, withNote("dry run: no metric decides the canary", dryRunNote)
	}
	for _, phase := range []v1alpha1.AnalysisPhase{v1alpha1.AnalysisFailed, v1alpha1.AnalysisError, v1alpha1.AnalysisInconclusive} {
		if failing := byPhase[phase]; len(failing) > 0 {
			return phase, withNote(explainAll(failing, l), dryRunNote)
		}
	}
	successful := len(byPhase[v1alpha1.AnalysisSuccessful])
	if successful == len(deciding) {
		return v1alpha1.AnalysisSuccessful, withNote(countMetrics(successful)+" successful", dryRunNote)
	}
	if len(byPhase[v1alpha1.AnalysisPending]) == len(deciding) {
		return v1alpha1.AnalysisPending, withNote("no measurement yet", dryRunNote)
	}
	pending := slices.Concat(byPhase[v1alpha1.AnalysisRunning], byPhase[v1alpha1.AnalysisPending])
	return v1alpha1.AnalysisRunning, withNote(
		fmt.Sprintf("%d of %s successful; %s", successful, countMetrics(len(deciding)), explainAll(pending, l)), dryRunNote)
}

func countMetrics(n int) string {
	if n == 1 {
		return "1 metric"
	}
	return fmt.Sprintf("%d metrics", n)
}

func withNote(message, note string) string {
	if note == "" {
		return message
	}
	return message + "; " + note
}

func dryRunSummary(dryRun []*v1alpha1.MetricResult, l limits) string {
	if len(dryRun) == 0 {
		return ""
	}
	parts := make([]string, 0, len(dryRun))
	for _, r := range dryRun {
		parts = append(parts, fmt.Sprintf("%s %s: %s", r.Name, r.Phase, explain(r, l)))
	}
	return "dry run, not deciding: " + strings.Join(parts, "; ")
}

func explainAll(results []*v1alpha1.MetricResult, l limits) string {
	parts := make([]string, 0, len(results))
	for _, r := range results {
		parts = append(parts, r.Name+": "+explain(r, l))
	}
	return strings.Join(parts, "; ")
}

// explain says why a metric is in its phase: the measurement behind it, and
// the numbers against the limit.
func explain(r *v1alpha1.MetricResult, l limits) string {
	switch r.Phase {
	case v1alpha1.AnalysisPending:
		return "not measured yet"
	case v1alpha1.AnalysisFailed:
		return fmt.Sprintf("%s (%d of %d measurements failed, failureLimit %d)",
			lastMessage(r, v1alpha1.AnalysisFailed), r.Failed, r.Count, l.failure)
	case v1alpha1.AnalysisError:
		if err := l.specErrors[r.Name]; err != nil {
			return fmt.Sprintf("%v (a mistake in the spec: measuring again cannot help, fix the metric)", err)
		}
		return fmt.Sprintf("%s (%d errors in a row, consecutiveErrorLimit %d)",
			r.Message, r.ConsecutiveError, l.consecutiveError)
	case v1alpha1.AnalysisInconclusive:
		return fmt.Sprintf("%s (%d inconclusive in a row, inconclusiveLimit %d)",
			r.Message, r.ConsecutiveInconclusive, l.inconclusive)
	}
	return r.Message
}

// lastMessage is the message of the newest kept measurement in phase, so a
// sticky Failed is explained by a failure rather than by a later success.
func lastMessage(r *v1alpha1.MetricResult, phase v1alpha1.AnalysisPhase) string {
	for i := len(r.Measurements) - 1; i >= 0; i-- {
		if r.Measurements[i].Phase == phase {
			return r.Measurements[i].Message
		}
	}
	return r.Message
}
