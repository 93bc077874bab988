package bench

import (
	"slices"
	"testing"
)

func TestConfigFromEnv(t *testing.T) {
	for _, name := range []string{nodesEnv, qpsEnv, burstEnv, scenariosEnv, repsEnv, outEnv, profileEnv, managerEnv} {
		t.Setenv(name, "")
	}
	cfg, err := configFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.nodes != 1000 || !slices.Equal(cfg.qps, []int{20, 200}) || !slices.Equal(cfg.bursts, []int{40, 400}) ||
		!slices.Equal(cfg.reps, []int{3, 3}) || len(cfg.scenarios) != 4 {
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
		cfg.scenarios[3].name != "workloadref-canary" || !cfg.scenarios[3].workloadRef || !cfg.scenarios[3].oursOnly ||
		!slices.Equal(cfg.managerEnv, []string{"GOMEMLIMIT=128MiB", "GOGC=50"}) {
		t.Errorf("one value per QPS, or one for all: %+v", cfg)
	}

	for name, value := range map[string]string{repsEnv: "1,2,3", burstEnv: "0", scenariosEnv: "rollback", nodesEnv: "-5", managerEnv: "GOMEMLIMIT"} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, value)
			if _, err := configFromEnv(); err == nil {
				t.Errorf("%s=%s accepted", name, value)
			}
		})
	}
}
