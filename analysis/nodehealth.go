package analysis

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

const (
	// defaultMaxUnhealthyNodes and defaultMaxPodReadinessDrop are the API
	// defaults, for a spec stored before them.
	defaultMaxUnhealthyNodes   = 0
	defaultMaxPodReadinessDrop = 10

	// maxNodesNamed bounds the regressed nodes a message names, and so the
	// evidence of a measurement, as the API's MaxItems does.
	maxNodesNamed = 5
	// maxPodsNamed bounds the pods a message names per node;
	// maxEvidencePodsNamed the pods one node's evidence names.
	maxPodsNamed         = 3
	maxEvidencePodsNamed = 10
	// maxEvidenceMessage bounds the message of one node's evidence, as the
	// API's MaxLength does.
	maxEvidenceMessage = 1024
)

// MeasureNodeHealth takes one measurement of a nodeHealth metric at now,
// from the nodes the observer saw: what the new version did to the nodes it
// reached, against same-zone nodes that did not change over the same time.
// It keeps no state: each judged node is compared with itself before the
// change through the transition times of its conditions and pods (see
// examineNode), so a node that vanished since the last measurement is
// simply no longer judged.
//
// It regresses (phase Failed) when
//   - more judged nodes turned unhealthy since the change than the
//     baseline shows over the same time (its fraction of nodes turned bad,
//     times the number of judged nodes) plus maxUnhealthyNodes, or
//   - the readiness of the other workloads' counted pods on the judged
//     nodes is more than maxPodReadinessDrop points below the baseline's
//     (100 when the baseline has no counted pod). With no counted pod on
//     the judged nodes, readiness is not judged; conditions still are.
//
// With no node to judge at all (all gone, all in maintenance) it is
// Inconclusive: an analysis never promotes on missing data. Value is the
// judged nodes' readiness in percent, or the number of unhealthy judged
// nodes when they have no counted pod (the message says which);
// BaselineValue is the baseline's counterpart. Measurement.Nodes holds the
// evidence of up to five regressed nodes, worst first.
func MeasureNodeHealth(m v1alpha1.AnalysisMetric, in NodeHealthInput, now time.Time) v1alpha1.Measurement {
	result := v1alpha1.Measurement{Time: metav1.NewTime(now)}
	v := judgeNodeHealth(m, in, now, &result)
	// Bounded as the status will keep it: the evidence names every
	// regressed node the message may have no room for.
	result.Phase, result.Message = v.phase, Truncate(v.message, maxMessageLength)
	return result
}

// nodeSide sums up the exams of the judged or the baseline nodes.
type nodeSide struct {
	exams             []nodeExam
	unhealthy         int
	counted, notReady int
}

func sideOf(obs []NodeObservation, userConditions []string, now time.Time) nodeSide {
	var s nodeSide
	for _, o := range obs {
		// A node without its object, or without the time the change
		// reached it, cannot be compared with itself before it.
		if o.Node == nil || o.Since.IsZero() {
			continue
		}
		e := examineNode(o, userConditions, now)
		s.exams = append(s.exams, e)
		if e.unhealthy() {
			s.unhealthy++
		}
		s.counted += e.counted
		s.notReady += len(e.bad)
	}
	return s
}

// readiness is the percentage of counted pods that are ready, 100 when none
// is counted.
func (s nodeSide) readiness() float64 {
	if s.counted == 0 {
		return 100
	}
	return 100 * float64(s.counted-s.notReady) / float64(s.counted)
}

// nodeHealthLimits are a metric's thresholds with their defaults.
type nodeHealthLimits struct {
	maxUnhealthy, maxDrop int32
}

func nodeHealthLimitsOf(nh *v1alpha1.NodeHealthMetric) nodeHealthLimits {
	l := nodeHealthLimits{maxUnhealthy: defaultMaxUnhealthyNodes, maxDrop: defaultMaxPodReadinessDrop}
	if nh.MaxUnhealthyNodes != nil {
		l.maxUnhealthy = *nh.MaxUnhealthyNodes
	}
	if nh.MaxPodReadinessDrop != nil {
		l.maxDrop = *nh.MaxPodReadinessDrop
	}
	return l
}

func judgeNodeHealth(m v1alpha1.AnalysisMetric, in NodeHealthInput, now time.Time, result *v1alpha1.Measurement) verdict {
	if err := checkMetric(m); err != nil {
		return erroneous("%v", err)
	}
	limits := nodeHealthLimitsOf(m.NodeHealth)
	judged := sideOf(in.Judged, m.NodeHealth.Conditions, now)
	baseline := sideOf(in.Baseline, m.NodeHealth.Conditions, now)
	result.Query = fmt.Sprintf("node health of %s running the new version against %s that did not change",
		plural(len(judged.exams), "node"), plural(len(baseline.exams), "same-zone node"))
	if len(judged.exams) == 0 {
		return inconclusive("no node to judge: the nodes the new version reached are gone, in maintenance or not known yet, and an analysis never passes on missing data")
	}

	// The unhealthy judged nodes the baseline explains: its rate of nodes
	// turned bad over the same time, applied to as many nodes.
	expected := 0.0
	if n := len(baseline.exams); n > 0 {
		expected = float64(baseline.unhealthy) / float64(n) * float64(len(judged.exams))
	}
	conditions := judgeConditions(judged, baseline, expected, limits.maxUnhealthy)
	parts := []string{conditions.message}
	conditionsRegressed := conditions.phase == v1alpha1.AnalysisFailed
	podsRegressed := false
	if judged.counted == 0 {
		result.Value = formatValue(float64(judged.unhealthy))
		result.BaselineValue = formatValue(expected)
		parts = append(parts, "no other pod counted on the judged nodes: readiness not judged, value is the number of unhealthy nodes")
	} else {
		result.Value = formatValue(judged.readiness())
		result.BaselineValue = formatValue(baseline.readiness())
		readiness := judgeReadiness(judged, baseline, limits.maxDrop)
		podsRegressed = readiness.phase == v1alpha1.AnalysisFailed
		parts = append(parts, readiness.message)
	}
	if !conditionsRegressed && !podsRegressed {
		return successful("%s", strings.Join(parts, "; "))
	}
	worst := regressedNodes(judged.exams, conditionsRegressed, podsRegressed)
	result.Nodes = evidenceOf(worst)
	return failed("regressed: %s; on %s", strings.Join(parts, "; "), nameNodes(worst))
}

// judgeConditions compares the judged nodes turned unhealthy with what the
// baseline explains plus maxUnhealthyNodes.
func judgeConditions(judged, baseline nodeSide, expected float64, maxUnhealthy int32) verdict {
	msg := fmt.Sprintf("%d of %s turned unhealthy since the change, against %s expected from the baseline (%d of %d)",
		judged.unhealthy, plural(len(judged.exams), "node"), formatValue(expected), baseline.unhealthy, len(baseline.exams))
	// unhealthy − baseline.unhealthy/n × judged > max, in whole numbers
	// (times n, the baseline's nodes), so that a baseline rate of one in
	// seven explains one of seven judged nodes exactly.
	n := max(len(baseline.exams), 1)
	excess := judged.unhealthy*n - baseline.unhealthy*len(judged.exams)
	if excess > int(maxUnhealthy)*n {
		return failed("%s: %s beyond it, more than maxUnhealthyNodes %d", msg, formatValue(float64(excess)/float64(n)), maxUnhealthy)
	}
	return successful("%s", msg)
}

// judgeReadiness compares the readiness of the other pods on the judged
// nodes with the baseline's.
func judgeReadiness(judged, baseline nodeSide, maxDrop int32) verdict {
	msg := fmt.Sprintf("other pods' readiness %s%% (%d of %d) against %s%% on the baseline (%d of %d)",
		formatValue(judged.readiness()), judged.counted-judged.notReady, judged.counted,
		formatValue(baseline.readiness()), baseline.counted-baseline.notReady, baseline.counted)
	if dropsMoreThan(baseline, judged, maxDrop) {
		drop := baseline.readiness() - judged.readiness()
		return failed("%s, a drop of %s points, more than maxPodReadinessDrop %d", msg, formatValue(drop), maxDrop)
	}
	return successful("%s", msg)
}

// dropsMoreThan says whether the readiness of judged is more than maxDrop
// points below that of baseline, in whole numbers: 100 × (rb/cb − rj/cj) >
// maxDrop, times cb × cj, so that a drop of exactly maxDrop is never more
// by rounding. A side with no counted pod is 100% ready.
func dropsMoreThan(baseline, judged nodeSide, maxDrop int32) bool {
	ratio := func(s nodeSide) (ready, counted int64) {
		if s.counted == 0 {
			return 1, 1
		}
		return int64(s.counted - s.notReady), int64(s.counted)
	}
	rb, cb := ratio(baseline)
	rj, cj := ratio(judged)
	return 100*(rb*cj-rj*cb) > int64(maxDrop)*cb*cj
}

// regressedNodes are the judged nodes that show the regression, worst
// first: turned unhealthy (when conditions regressed), then with the most
// pods not ready (when readiness regressed), then by name.
func regressedNodes(exams []nodeExam, conditions, pods bool) []nodeExam {
	var out []nodeExam
	for _, e := range exams {
		if conditions && e.unhealthy() || pods && len(e.bad) > 0 {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b nodeExam) int {
		return cmp.Or(
			-cmp.Compare(len(a.turnedBad), len(b.turnedBad)),
			-cmp.Compare(len(a.bad), len(b.bad)),
			strings.Compare(a.name, b.name))
	})
	return out
}

// evidenceOf is the per-node evidence of the worst regressed nodes.
func evidenceOf(worst []nodeExam) []v1alpha1.NodeEvidence {
	out := make([]v1alpha1.NodeEvidence, 0, min(len(worst), maxNodesNamed))
	for _, e := range worst[:min(len(worst), maxNodesNamed)] {
		out = append(out, v1alpha1.NodeEvidence{
			Node:    e.name,
			Message: Truncate(e.describe(maxEvidencePodsNamed), maxEvidenceMessage),
		})
	}
	return out
}

// nameNodes names the worst regressed nodes and a few of their pods.
func nameNodes(worst []nodeExam) string {
	named := make([]string, 0, min(len(worst), maxNodesNamed))
	for _, e := range worst[:min(len(worst), maxNodesNamed)] {
		named = append(named, e.name+": "+e.describe(maxPodsNamed))
	}
	s := strings.Join(named, "; ")
	if more := len(worst) - len(named); more > 0 {
		s += "; and " + plural(more, "more node")
	}
	return s
}

// describe says what went wrong on a node since the change, naming at most
// podsNamed of its pods.
func (e nodeExam) describe(podsNamed int) string {
	var parts []string
	if e.unhealthy() {
		parts = append(parts, strings.Join(e.turnedBad, ", "))
	}
	if len(e.bad) > 0 {
		pods := make([]string, 0, min(len(e.bad), podsNamed))
		for _, p := range e.bad[:min(len(e.bad), podsNamed)] {
			pods = append(pods, fmt.Sprintf("%s %s", p.name, p.fault))
		}
		s := fmt.Sprintf("%d of %d other pods not ready since the change: %s", len(e.bad), e.counted, strings.Join(pods, ", "))
		if more := len(e.bad) - len(pods); more > 0 {
			s += fmt.Sprintf(" and %d more", more)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " and ")
}

// plural is "1 node", "2 nodes".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// checkNodeHealthMetric is why a nodeHealth metric can never be measured,
// or nil; the CRD refuses these, a spec stored before it or written around
// it gets the same answer here.
func checkNodeHealthMetric(m v1alpha1.AnalysisMetric) error {
	nh := m.NodeHealth
	switch {
	case m.Query != "" || m.Preset != "" || m.Web != nil:
		return errors.New("sets nodeHealth and a query, preset or web: set exactly one")
	case m.ThresholdRange != nil || m.Baseline != nil:
		return errors.New("a nodeHealth metric has its own thresholds and baseline: thresholdRange and baseline do not apply")
	case m.ErrorRate != nil:
		return errors.New("errorRate is only used with preset errorRate")
	case nh.MaxUnhealthyNodes != nil && *nh.MaxUnhealthyNodes < 0:
		return fmt.Errorf("nodeHealth maxUnhealthyNodes %d: must be at least 0", *nh.MaxUnhealthyNodes)
	case nh.MaxPodReadinessDrop != nil && (*nh.MaxPodReadinessDrop < 0 || *nh.MaxPodReadinessDrop > 100):
		return fmt.Errorf("nodeHealth maxPodReadinessDrop %d: must be between 0 and 100 points", *nh.MaxPodReadinessDrop)
	case nh.OnRegression != "" && nh.OnRegression != v1alpha1.NodeHealthFail && nh.OnRegression != v1alpha1.NodeHealthPause:
		return fmt.Errorf("nodeHealth onRegression %q: use %s or %s", nh.OnRegression, v1alpha1.NodeHealthFail, v1alpha1.NodeHealthPause)
	case slices.Contains(nh.Conditions, ""):
		return errors.New("nodeHealth conditions: a condition type is empty")
	}
	return nil
}
