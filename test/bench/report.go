package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// report is everything a benchmark measured: the JSON of BENCH_OUT.
type report struct {
	Started     time.Time     `json:"started"`
	Comparisons []*comparison `json:"comparisons"`
}

// comparison is every run at one cluster size and one client rate limit,
// and their medians.
type comparison struct {
	Nodes int `json:"nodes"`
	QPS   int `json:"qps"`
	Burst int `json:"burst"`
	Reps  int `json:"reps"`
	// Peers are the controllers ours was compared with, in the table's
	// order.
	Peers []string `json:"peers"`
	// ManagerEnv is what our manager's environment was given, its soft
	// memory limit included.
	ManagerEnv []string `json:"managerEnv,omitempty"`
	// Scenarios in the order they ran.
	Scenarios []string `json:"scenarios"`
	Runs      []*run   `json:"runs"`
	// Medians by scenario, controller and figure, over the runs that have
	// the figure.
	Medians map[string]map[string]map[string]float64 `json:"medians"`
	// NotAvailable says, by scenario and controller, why the controller
	// could not be measured.
	NotAvailable map[string]map[string]string `json:"notAvailable,omitempty"`
}

// summarize computes the medians.
func (c *comparison) summarize() {
	c.Medians = map[string]map[string]map[string]float64{}
	values := map[[3]string][]float64{}
	for _, r := range c.Runs {
		if r.NotAvailable != "" {
			if c.NotAvailable == nil {
				c.NotAvailable = map[string]map[string]string{}
			}
			if c.NotAvailable[r.Scenario] == nil {
				c.NotAvailable[r.Scenario] = map[string]string{}
			}
			c.NotAvailable[r.Scenario][r.Controller] = r.NotAvailable
			continue
		}
		for fig, v := range r.Figures {
			k := [3]string{r.Scenario, r.Controller, fig}
			values[k] = append(values[k], v)
		}
	}
	for k, vs := range values {
		byController := c.Medians[k[0]]
		if byController == nil {
			byController = map[string]map[string]float64{}
			c.Medians[k[0]] = byController
		}
		if byController[k[1]] == nil {
			byController[k[1]] = map[string]float64{}
		}
		byController[k[1]][k[2]] = median(vs)
	}
}

// figureRow is one line of the table.
type figureRow struct {
	figure, label string
	decimals      int
}

var figureRows = append([]figureRow{
	{figWall, "wall time (s)", 1},
	{figRequests, "requests sent (in process)", 0},
	{figAudited, "requests received (audit log)", 0},
	{figWrites, "writes sent (in process)", 0},
	{figFailed, "requests failed (in process)", 0},
	{figPodWrites, "pod writes / node", 3},
	{figOwnWrites, "own-kind writes / node", 3},
	{figEvtWrites, "event writes / node", 3},
	{figQPSFloor, "QPS floor = writes / QPS (s)", 1},
	{figOverFloor, "wall time / QPS floor", 2},
	{figPeakRate, "peak requests/s over 10s (audit log)", 1},
	{figPeakRSS, "peak RSS (MiB)", 0},
	{figCPU, "CPU (s)", 1},
	{figWithDSRequests, "requests received with the DaemonSet controller's (audit log)", 0},
	{figWithDSWrites, "writes received with the DaemonSet controller's (audit log)", 0},
}, reconcileRows()...)

func reconcileRows() []figureRow {
	var rows []figureRow
	for _, name := range []string{"extendeddaemonset", "extendeddaemonsetreplicaset"} {
		for _, q := range reconcileQuantiles {
			rows = append(rows, figureRow{reconcileFigure(name, q), fmt.Sprintf("reconcile p%g %s (ms)", q*100, name), 1})
		}
	}
	for _, q := range reconcileQuantiles {
		rows = append(rows, figureRow{reconcileFigure(decisionOnly, q), fmt.Sprintf("decision p%g extendeddaemonsetreplicaset, writes excluded (ms)", q*100), 1})
	}
	for _, q := range reconcileQuantiles {
		rows = append(rows, figureRow{reconcileFigure(kruiseReconciler, q), fmt.Sprintf("reconcile p%g Kruise's %s (ms)", q*100, kruiseReconciler), 1})
	}
	return rows
}

// writeTable writes the comparison as a markdown table of medians: a
// column per peer, ours, and the ratio of ours to each peer.
func (c *comparison) writeTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\n### %d nodes, client QPS %d, burst %d: medians of %d runs\n\n", c.Nodes, c.QPS, c.Burst, c.Reps)
	columns := append(slices.Clone(c.Peers), ours)
	b.WriteString("| scenario | figure |")
	for _, name := range columns {
		fmt.Fprintf(&b, " %s |", name)
	}
	for _, p := range c.Peers {
		fmt.Fprintf(&b, " ours/%s |", p)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("--:|", len(columns)+len(c.Peers)) + "\n")
	for _, sc := range c.Scenarios {
		if len(c.Medians[sc]) == 0 {
			fmt.Fprintf(&b, "| %s | not available |%s\n", sc, strings.Repeat(" |", len(columns)+len(c.Peers)))
			continue
		}
		for _, row := range figureRows {
			if line, ok := c.tableRow(sc, row, columns); ok {
				b.WriteString(line)
			}
		}
	}
	b.WriteString(`
Ours counts its requests in its process by verb and resource
(extendeddaemonset_api_requests_total). Native's requests and writes are
kube-controller-manager's rest_client_requests_total, by HTTP method, its
garbage collector included; its writes per node are the API server audit
log's requests from the daemon-set-controller user agent. The audit log
row counts each controller's user agent, a check on the process's count.
Native's peak RSS and CPU are kube-controller-manager's, garbage collector
included.
`)
	if slices.Contains(c.Peers, kruise) {
		b.WriteString(`Kruise's requests and writes are its manager's rest_client_requests_total,
by HTTP method, its webhook controller and its idle controllers included;
its writes per node are the audit log's requests from its kruise-manager
user agents; its peak RSS and CPU are its manager's. Its webhook is left
out: each Advanced DaemonSet sets every field the webhook would default.
`)
	}
	if slices.ContainsFunc(c.Scenarios, isWorkloadRef) {
		b.WriteString(`In a workloadRef scenario, ours deletes the DaemonSet's pods and the
DaemonSet controller, with a client of its own at the same rate limit,
recreates them: ours' figures are the manager's alone, and the rows "with
the DaemonSet controller's" add that controller's requests, as the audit
log counts them.
`)
	}
	if slices.ContainsFunc(c.Scenarios, isCanary) {
		fmt.Fprintf(&b, "The canary lasts %s, the shortest the CRD accepts: it refuses 0s.\n", canaryDuration)
	}
	fmt.Fprintf(&b, "Over 10s, QPS %d and burst %d allow %.1f requests/s.\n", c.QPS, c.Burst, float64(c.QPS)+float64(c.Burst)/rateWindow.Seconds())
	for _, sc := range c.Scenarios {
		for _, name := range columns {
			if why, ok := c.NotAvailable[sc][name]; ok {
				some := "No"
				if c.Medians[sc][name] != nil {
					some = "Some"
				}
				fmt.Fprintf(&b, "%s %s runs of %s were measured: %s.\n", some, sc, name, why)
			}
		}
	}
	for _, r := range c.Runs {
		if r.OverRateLimit != "" {
			fmt.Fprintf(&b, "Over the rate limit: %s, %s, run %d: %s.\n", r.Scenario, r.Controller, r.Rep, r.OverRateLimit)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// tableRow is the line of figure row of scenario sc, with a cell per
// column and the ratio of ours to each peer; false when no controller has
// the figure.
func (c *comparison) tableRow(sc string, row figureRow, columns []string) (string, bool) {
	var cells []string
	found := false
	for _, name := range columns {
		v, ok := c.Medians[sc][name][row.figure]
		found = found || ok
		cells = append(cells, cell(v, ok, row.decimals))
	}
	if !found {
		return "", false
	}
	o, oOK := c.Medians[sc][ours][row.figure]
	for _, p := range c.Peers {
		ratio := "-"
		if v, ok := c.Medians[sc][p][row.figure]; ok && oOK && v != 0 {
			ratio = strconv.FormatFloat(o/v, 'f', 2, 64)
		}
		cells = append(cells, ratio)
	}
	return fmt.Sprintf("| %s | %s | %s |\n", sc, row.label, strings.Join(cells, " | ")), true
}

func cell(v float64, ok bool, decimals int) string {
	if !ok {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// writeJSON writes the report to path, creating its directory.
func (r *report) writeJSON(path string) error {
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the report: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}
