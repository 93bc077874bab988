package bench

import (
	"strings"
	"testing"
)

// TestWriteTable: a column per peer, then ours, then ours divided by each
// peer, in the order of Peers; a figure a controller lacks is "-", and so
// is its ratio; a controller not measured is said under the table.
func TestWriteTable(t *testing.T) {
	cmp := &comparison{
		Nodes: 100, QPS: 20, Burst: 40, Reps: 1,
		Peers:     []string{native, kruise},
		Scenarios: []string{"update", "inplace", "canary"},
		Runs: []*run{
			{Scenario: "update", Controller: native, Rep: 1, Figures: map[string]float64{figWall: 10, figWrites: 200}},
			{Scenario: "update", Controller: kruise, Rep: 1, Figures: map[string]float64{figWall: 20, figWrites: 250, reconcileFigure(kruiseReconciler, 0.99): 31.5}},
			{Scenario: "update", Controller: ours, Rep: 1, Figures: map[string]float64{figWall: 5, figWrites: 100, reconcileFigure(decisionOnly, 0.5): 0.25}},
			{Scenario: "inplace", Controller: kruise, Rep: 1, NotAvailable: "in-place update not available: 100 of 100 pods were replaced, not patched"},
			{Scenario: "inplace", Controller: ours, Rep: 1, Figures: map[string]float64{figWall: 4}},
		},
	}
	cmp.summarize()
	var b strings.Builder
	if err := cmp.writeTable(&b); err != nil {
		t.Fatal(err)
	}
	table := b.String()
	for _, want := range []string{
		"| scenario | figure | native | kruise | ours | ours/native | ours/kruise |\n|---|---|--:|--:|--:|--:|--:|\n",
		"| update | wall time (s) | 10.0 | 20.0 | 5.0 | 0.50 | 0.25 |\n",
		"| update | writes sent (in process) | 200 | 250 | 100 | 0.50 | 0.40 |\n",
		"| update | decision p50 extendeddaemonsetreplicaset, writes excluded (ms) | - | - | 0.2 | - | - |\n",
		"| update | reconcile p99 Kruise's daemonset-controller (ms) | - | 31.5 | - | - | - |\n",
		"| inplace | wall time (s) | - | - | 4.0 | - | - |\n",
		"| canary | not available | | | | | |\n",
		"No inplace runs of kruise were measured: in-place update not available: 100 of 100 pods were replaced, not patched.\n",
		"Kruise's requests and writes are its manager's rest_client_requests_total",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "| update | CPU (s)") {
		t.Errorf("a figure no controller has got a row:\n%s", table)
	}

	cmp.Peers = []string{native}
	b.Reset()
	if err := cmp.writeTable(&b); err != nil {
		t.Fatal(err)
	}
	if table := b.String(); !strings.Contains(table, "| update | wall time (s) | 10.0 | 5.0 | 0.50 |\n") || strings.Contains(table, "Kruise's") {
		t.Errorf("native alone: a column for it and ours, no word of Kruise:\n%s", table)
	}
}
