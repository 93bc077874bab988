package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

func TestMain(m *testing.M) {
	// The CRD installation logs through controller-runtime; the benchmark
	// says what it does itself.
	ctrllog.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

// BenchmarkControllers compares our controller with the native DaemonSet
// controller as the BENCH_* variables say; run it with `make bench`.
func BenchmarkControllers(b *testing.B) {
	testenv.RequireAssets(b)
	cfg, err := configFromEnv()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := runBenchmark(b.Context(), cfg, b.Logf, os.Stdout); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("report written to %s", cfg.out)
}

// TestBenchmarkCollectsEveryFigure runs every scenario once on 20 nodes,
// the workloadRef ones included, against the native controller and, when
// BENCH_KRUISE holds its build, Kruise: the benchmark itself must keep
// working, whatever its figures are.
func TestBenchmarkCollectsEveryFigure(t *testing.T) {
	testenv.RequireAssets(t)
	kruiseDir := os.Getenv(kruiseEnv)
	peers, err := peersNamed("", kruiseBuilt(kruiseDir))
	if err != nil {
		t.Fatal(err)
	}
	cfg := config{
		nodes: 20, qps: []int{100}, bursts: []int{200}, reps: []int{1}, scenarios: scenarios,
		peers: peers, kruiseDir: kruiseDir,
		out: filepath.Join(t.TempDir(), "bench.json"),
		// Ours runs with its Deployment's soft memory limit, as by default.
		managerEnv: withSoftMemoryLimit(nil, 20),
	}
	rep, err := runBenchmark(t.Context(), cfg, t.Logf, t.Output())
	if err != nil {
		t.Fatal(err)
	}
	cmp := rep.Comparisons[0]
	want := map[string]int{}
	for _, sc := range scenarios {
		for _, c := range append(slices.Clone(peers), ours) {
			if c == ours || sc.runBy(c) {
				want[sc.name+" "+c] = 1
			}
		}
	}
	for _, r := range cmp.Runs {
		want[r.Scenario+" "+r.Controller]--
		if r.NotAvailable != "" {
			// Kruise updates in place: that is what it is compared on.
			if r.Controller == kruise {
				t.Errorf("%s, kruise: %s", r.Scenario, r.NotAvailable)
			}
			t.Logf("%s, %s: %s", r.Scenario, r.Controller, r.NotAvailable)
			continue
		}
		for _, fig := range []string{figWall, figRequests, figAudited, figWrites, figFailed, figPodWrites, figOwnWrites, figEvtWrites, figQPSFloor, figOverFloor, figPeakRate, figPeakRSS, figCPU} {
			if _, ok := r.Figures[fig]; !ok {
				t.Errorf("%s, %s: no %s", r.Scenario, r.Controller, fig)
			}
		}
		if isWorkloadRef(r.Scenario) {
			for _, fig := range []string{figWithDSRequests, figWithDSWrites} {
				if _, ok := r.Figures[fig]; !ok {
					t.Errorf("%s, %s: no %s", r.Scenario, r.Controller, fig)
				}
			}
			// Ours deletes the pods, the DaemonSet controller creates
			// them: together they write more than ours alone.
			if r.Controller == ours && r.Figures[figWithDSWrites] <= r.Figures[figWrites] {
				t.Errorf("%s, ours: %v writes with the DaemonSet controller's, %v alone", r.Scenario, r.Figures[figWithDSWrites], r.Figures[figWrites])
			}
		}
		for _, name := range []string{"extendeddaemonsetreplicaset", decisionOnly} {
			if _, ok := r.Figures[reconcileFigure(name, 0.5)]; r.Controller == ours && !ok {
				t.Errorf("%s, ours: no %s time", r.Scenario, name)
			}
		}
		if _, ok := r.Figures[reconcileFigure(kruiseReconciler, 0.5)]; r.Controller == kruise && !ok {
			t.Errorf("%s, kruise: no %s time", r.Scenario, kruiseReconciler)
		}
	}
	for run, missing := range want {
		if missing != 0 {
			t.Errorf("%s ran %d times, want 1", run, 1-missing)
		}
	}
	raw, err := os.ReadFile(cfg.out)
	if err != nil {
		t.Fatal(err)
	}
	var decoded report
	if err := json.Unmarshal(raw, &decoded); err != nil {
		t.Fatalf("report %s: %v", cfg.out, err)
	}
	if got := decoded.Comparisons[0].ManagerEnv; !slices.Equal(got, []string{"GOMEMLIMIT=102MiB"}) {
		t.Errorf("the report says ours ran with %q, want its soft memory limit", got)
	}
}
