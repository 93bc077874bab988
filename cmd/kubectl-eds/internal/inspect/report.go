package inspect

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// writeReport writes the status of the snapshot's ExtendedDaemonSet:
// state, replica sets, rollout progress (as bars on a terminal), canary
// nodes and analysis while a canary runs, conditions, and last events.
func writeReport(out io.Writer, s *snapshot, terminal bool) error {
	// Not kubectl's table writer: it remembers column widths from one
	// section to the next, and each section has columns of its own.
	w := tabwriter.NewWriter(out, 6, 4, 3, ' ', 0)
	r := report{w: w, s: s}
	r.header()
	r.maintenance()
	r.progress(terminal)
	r.domains()
	r.canary()
	r.canarySteps()
	r.gates()
	r.analysis()
	r.bakeAnalysis()
	r.conditions()
	r.events()
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing the status: %w", err)
	}
	return nil
}

type report struct {
	w io.Writer
	s *snapshot
}

// line writes one line; tabs separate the cells the writer aligns. The
// tab writer holds everything until Flush, which reports a failed write.
func (r *report) line(format string, args ...any) {
	fmt.Fprintf(r.w, format+"\n", args...)
}

func (r *report) header() {
	eds := r.s.eds
	st := &eds.Status
	r.line("Name:\t%s", eds.Name)
	r.line("Namespace:\t%s", eds.Namespace)
	if ref := eds.Spec.WorkloadRef; ref != nil {
		r.line("Workload:\t%s %s: its template and pods are rolled out", ref.Kind, ref.Name)
	}
	r.line("State:\t%s", stateText(eds))
	if ready := findCondition(eds, v1alpha1.ReadyCondition); ready != nil && ready.Message != "" {
		r.line("Message:\t%s", oneLine(ready.Message))
	}
	if st.ObservedGeneration == eds.Generation {
		r.line("Generation:\t%d, observed", eds.Generation)
	} else {
		r.line("Generation:\t%d, not yet observed: the status describes generation %d", eds.Generation, st.ObservedGeneration)
	}
	r.line("Active RS:\t%s", r.replicaSetText(st.ActiveReplicaSet))
	if c := st.Canary; c != nil {
		r.line("Canary RS:\t%s", r.replicaSetText(c.ReplicaSet))
		r.line("Canary:\t%s", canaryText(c, r.s))
	}
	if st.IgnoredUnresponsiveNodes > 0 {
		r.line("Ignored:\t%d nodes not Ready for long, not counted as unavailable", st.IgnoredUnresponsiveNodes)
	}
}

func stateText(eds *v1alpha1.ExtendedDaemonSet) string {
	st := &eds.Status
	switch {
	case st.State == "":
		return "Unknown (not yet reconciled)"
	case st.Reason == "":
		return string(st.State)
	}
	return fmt.Sprintf("%s (%s)", st.State, st.Reason)
}

// replicaSetText is a replica set's name, revision, images and counters.
func (r *report) replicaSetText(name string) string {
	if name == "" {
		return "<none>"
	}
	ers := r.s.replicaSet(name)
	if ers == nil {
		return name + " (not found)"
	}
	st := &ers.Status
	return fmt.Sprintf("%s, revision %s, %s: %d desired, %d ready, %d available",
		name, orNone(ers.Annotations[v1alpha1.RevisionAnnotation]), images(ers.Spec.Template.Spec), st.Desired, st.Ready, st.Available)
}

// canaryText is where the canary stands: running, paused or failed, and
// since when.
func canaryText(c *v1alpha1.CanaryStatus, s *snapshot) string {
	state := "running"
	switch {
	case c.Failed:
		state = "failed"
	case c.Paused:
		state = "paused"
	}
	state += reasonSuffix(c.Reason, c.Message)
	if c.StartedAt != nil {
		state += fmt.Sprintf("; started %s ago", age(*c.StartedAt, s.now))
	}
	if c.ReadyAt != nil {
		state += fmt.Sprintf(", every pod available since %s ago", age(*c.ReadyAt, s.now))
	}
	return oneLine(state)
}

func (r *report) progress(terminal bool) {
	st := &r.s.eds.Status
	r.line("Rollout:")
	r.line("%s", progressLine("Up to date", st.UpToDate, st.Desired, terminal))
	r.line("%s", progressLine("Available", st.Available, st.Desired, terminal))
}

// canary lists the canary nodes and the pods on them: a canary is judged
// by their restarts and readiness.
func (r *report) canary() {
	c := r.s.eds.Status.Canary
	if c == nil {
		return
	}
	r.line("Canary nodes:")
	if len(c.Nodes) == 0 {
		r.line("  <none yet>")
		return
	}
	r.line("  NODE\tPOD\tREPLICA SET\tROLE\tREADY\tSTATUS\tRESTARTS")
	for _, node := range c.Nodes {
		pods := r.s.podsOn(node)
		if len(pods) == 0 {
			r.line("  %s\t<no pod>\t-\t-\t-\t-\t-", node)
		}
		for _, pod := range pods {
			r.line("  %s\t%s\t%s\t%s\t%s\t%s\t%d", node, pod.Name, orNone(pod.ReplicaSet),
				podRole(r.s.eds, pod.ReplicaSet), readyContainers(pod.Pod), podStatus(pod.Pod), restarts(pod.Pod))
		}
	}
}

// analysis shows each metric's latest value against its threshold.
func (r *report) analysis() {
	c := r.s.eds.Status.Canary
	if c == nil || c.Analysis == nil {
		return
	}
	r.analysisTable("Analysis", c.Analysis)
}

// analysisTable shows the analysis a under title: its phase and message,
// then each metric's.
func (r *report) analysisTable(title string, a *v1alpha1.AnalysisStatus) {
	// A section title, outside the columns of the tables around it.
	header := title + ": " + orNone(string(a.Phase))
	if a.Message != "" {
		header += ": " + oneLine(a.Message)
	}
	if spec := r.s.eds.Spec.Strategy.Canary; spec != nil && spec.Analysis != nil && spec.Analysis.DryRun {
		header += " (dry run: no metric decides)"
	}
	r.line("%s", header)
	if len(a.Metrics) == 0 {
		return
	}
	r.line("  METRIC\tPHASE\tMEASUREMENTS\tLAST VALUE\tTHRESHOLD\tMESSAGE")
	for i := range a.Metrics {
		m := &a.Metrics[i]
		r.line("  %s\t%s\t%s\t%s\t%s\t%s", m.Name, orNone(string(m.Phase)), measurementCounts(m), lastValue(m),
			threshold(metricSpec(r.s.eds, m.Name)), oneLine(orNone(m.Message)))
	}
	r.nodeEvidence(a)
}

func (r *report) conditions() {
	conds := sortedConditions(r.s.eds.Status.Conditions)
	if len(conds) == 0 {
		r.line("Conditions: <none>")
		return
	}
	r.line("Conditions:")
	r.line("  TYPE\tSTATUS\tREASON\tMESSAGE")
	for _, c := range conds {
		r.line("  %s\t%s\t%s\t%s", c.Type, c.Status, orNone(c.Reason), oneLine(orNone(c.Message)))
	}
}

func (r *report) events() {
	switch {
	case r.s.eventsErr != nil:
		r.line("Events: not shown: %s", oneLine(r.s.eventsErr.Error()))
		return
	case len(r.s.events) == 0:
		r.line("Events: <none>")
		return
	}
	r.line("Events:")
	r.line("  LAST SEEN\tTYPE\tREASON\tMESSAGE")
	for i := range r.s.events {
		e := &r.s.events[i]
		r.line("  %s\t%s\t%s\t%s", age(metav1.NewTime(eventTime(e)), r.s.now), e.Type, e.Reason, oneLine(e.Message))
	}
}

// conditionOrder puts the conditions that tell the state first, then
// the canary's; the controller's order changes with its writes.
var conditionOrder = []string{
	v1alpha1.ReadyCondition, v1alpha1.ReconcilingCondition, v1alpha1.StalledCondition,
	v1alpha1.CanaryCondition, v1alpha1.AnalysisCondition,
}

func sortedConditions(conds []metav1.Condition) []metav1.Condition {
	rank := func(t string) int {
		if i := slices.Index(conditionOrder, t); i >= 0 {
			return i
		}
		return len(conditionOrder)
	}
	out := slices.Clone(conds)
	slices.SortStableFunc(out, func(a, b metav1.Condition) int {
		return cmp.Or(cmp.Compare(rank(a.Type), rank(b.Type)), cmp.Compare(a.Type, b.Type))
	})
	return out
}

func findCondition(eds *v1alpha1.ExtendedDaemonSet, conditionType string) *metav1.Condition {
	for i := range eds.Status.Conditions {
		if eds.Status.Conditions[i].Type == conditionType {
			return &eds.Status.Conditions[i]
		}
	}
	return nil
}

// oneLine keeps a message on its line and in its cell: a newline would
// break the table, a tab would split the cell.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ").Replace(s)
}
