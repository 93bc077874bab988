package bench

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestConfigFromEnv(t *testing.T) {
	for _, name := range []string{nodesEnv, qpsEnv, burstEnv, scenariosEnv, repsEnv, outEnv, profileEnv, managerEnv, peersEnv, kruiseEnv} {
		t.Setenv(name, "")
	}
	cfg, err := configFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.nodes != 1000 || !slices.Equal(cfg.qps, []int{20, 200}) || !slices.Equal(cfg.bursts, []int{40, 400}) ||
		!slices.Equal(cfg.reps, []int{3, 3}) || len(cfg.scenarios) != 5 || cfg.scenarios[2].name != "surge" ||
		!slices.Equal(cfg.peers, []string{native}) || !slices.Equal(cfg.managerEnv, []string{"GOMEMLIMIT=102MiB"}) {
		t.Errorf("defaults: %+v", cfg)
	}

	t.Setenv(qpsEnv, "20,200")
	t.Setenv(repsEnv, "1,3")
	t.Setenv(burstEnv, "50")
	t.Setenv(scenariosEnv, "update,canary,workloadref,workloadref-canary")
	t.Setenv(managerEnv, " GOMEMLIMIT=128MiB  GOGC=50 ")
	if cfg, err = configFromEnv(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.reps, []int{1, 3}) || !slices.Equal(cfg.bursts, []int{50, 50}) ||
		cfg.scenarios[0].name != "update" || cfg.scenarios[1].name != "canary" ||
		cfg.scenarios[2].name != "workloadref" || !cfg.scenarios[2].workloadRef ||
		cfg.scenarios[3].name != "workloadref-canary" || !cfg.scenarios[3].workloadRef || len(cfg.scenarios[3].peers) != 0 ||
		!slices.Equal(cfg.managerEnv, []string{"GOMEMLIMIT=128MiB", "GOGC=50"}) {
		t.Errorf("one value per QPS, or one for all: %+v", cfg)
	}

	for name, value := range map[string]string{repsEnv: "1,2,3", burstEnv: "0", scenariosEnv: "rollback", nodesEnv: "-5", managerEnv: "GOMEMLIMIT", peersEnv: "kruise"} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, value)
			if _, err := configFromEnv(); err == nil {
				t.Errorf("%s=%s accepted", name, value)
			}
		})
	}
}

// TestConfigFindsKruise: a directory laid out as test/tools/kruise.sh
// makes Kruise a peer by default; one without the binary or the CRD does
// not, and naming Kruise then is an error.
func TestConfigFindsKruise(t *testing.T) {
	for _, name := range []string{nodesEnv, qpsEnv, burstEnv, scenariosEnv, repsEnv, outEnv, profileEnv, managerEnv, peersEnv} {
		t.Setenv(name, "")
	}
	dir := t.TempDir()
	t.Setenv(kruiseEnv, dir)
	for _, name := range []string{kruiseManager, kruiseCRD} {
		if cfg, err := configFromEnv(); err != nil || !slices.Equal(cfg.peers, []string{native}) {
			t.Errorf("without %s: peers %v, error %v; want native alone", name, cfg.peers, err)
		}
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := configFromEnv()
	if err != nil || !slices.Equal(cfg.peers, []string{native, kruise}) || cfg.kruiseDir != dir {
		t.Errorf("built: peers %v in %q, error %v; want native,kruise in %q", cfg.peers, cfg.kruiseDir, err, dir)
	}
	t.Setenv(peersEnv, " kruise ")
	if cfg, err := configFromEnv(); err != nil || !slices.Equal(cfg.peers, []string{kruise}) {
		t.Errorf("%s=kruise: peers %v, error %v", peersEnv, cfg.peers, err)
	}
}

func TestPeersNamed(t *testing.T) {
	const notBuilt = "BENCH_KRUISE is not set"
	for _, tc := range []struct {
		list, notBuilt string
		want           []string
		err            string
	}{
		{list: "", notBuilt: notBuilt, want: []string{native}},
		{list: " ", notBuilt: "", want: []string{native, kruise}},
		{list: "kruise,native", want: []string{kruise, native}},
		{list: "native", notBuilt: notBuilt, want: []string{native}},
		{list: "kruise", notBuilt: notBuilt, err: "kruise is not built (BENCH_KRUISE is not set): run test/tools/kruise.sh"},
		{list: "native,native", err: `peer "native" named twice`},
		{list: "native,openkruise", err: `unknown peer "openkruise" (known: native,kruise)`},
		{list: "native,", err: `unknown peer ""`},
		{list: " none", notBuilt: "", want: nil},
		{list: "none,native", err: `unknown peer "none"`},
	} {
		got, err := peersNamed(tc.list, tc.notBuilt)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("peersNamed(%q, %q) = %v, %v; want an error with %q", tc.list, tc.notBuilt, got, err, tc.err)
		case tc.err == "" && (err != nil || !slices.Equal(got, tc.want)):
			t.Errorf("peersNamed(%q, %q) = %v, %v; want %v", tc.list, tc.notBuilt, got, err, tc.want)
		}
	}
}

// Ours runs with the soft memory limit its Deployment would give it at
// the recommended memory limit for the cluster's size, unless
// BENCH_MANAGER_ENV sets GOMEMLIMIT; the peers' environment is theirs.
func TestManagerGetsTheSoftMemoryLimitOfItsDeployment(t *testing.T) {
	for _, name := range []string{nodesEnv, qpsEnv, burstEnv, scenariosEnv, repsEnv, outEnv, profileEnv, managerEnv, peersEnv, kruiseEnv} {
		t.Setenv(name, "")
	}
	for _, tc := range []struct {
		nodes, env string
		want       []string
	}{
		{nodes: "20", want: []string{"GOMEMLIMIT=102MiB"}},      // 70% of 147 MiB, the binary's room
		{nodes: "5000", want: []string{"GOMEMLIMIT=102MiB"}},    // 29 MiB + 18 KiB x 5,000 is under 147 MiB
		{nodes: "10000", want: []string{"GOMEMLIMIT=143MiB"}},   // 70% of 205 MiB
		{nodes: "100000", want: []string{"GOMEMLIMIT=1250MiB"}}, // 70% of 1.7 GiB
		{nodes: "5000", env: "GOGC=50", want: []string{"GOGC=50", "GOMEMLIMIT=102MiB"}},
		{nodes: "5000", env: "GOMEMLIMIT=140MiB", want: []string{"GOMEMLIMIT=140MiB"}},
		{nodes: "5000", env: "GOMEMLIMIT=off GOGC=50", want: []string{"GOMEMLIMIT=off", "GOGC=50"}},
	} {
		t.Setenv(nodesEnv, tc.nodes)
		t.Setenv(managerEnv, tc.env)
		cfg, err := configFromEnv()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(cfg.managerEnv, tc.want) {
			t.Errorf("%s nodes, %s=%q: our manager's environment %q, want %q", tc.nodes, managerEnv, tc.env, cfg.managerEnv, tc.want)
		}
	}
}
