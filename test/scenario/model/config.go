package model

import "math/rand/v2"

// DrawConfig draws the cluster a sequence starts from: mostly the
// defaults, sometimes a handover, a surge, settings already on, or a
// workloadRef.
func DrawConfig(rng *rand.Rand) Config {
	cfg := Config{
		Nodes:         4 + rng.IntN(4),
		Handover:      rng.IntN(5) == 0,
		SelectorUnset: rng.IntN(3) == 0,
		Steps:         rng.IntN(4) == 0,
		Topology:      rng.IntN(4) == 0,
		Manual:        rng.IntN(6) == 0,
		Analysis:      rng.IntN(3) == 0,
		Untainted:     rng.IntN(3) == 0,
	}
	if rng.IntN(4) == 0 {
		cfg.MaxSurge = 1
	}
	cfg.BarePod = cfg.Handover && rng.IntN(2) == 0
	// A quarter roll out the pods of a DaemonSet they reference, where
	// surge, handover and a selector of their own have no place.
	cfg.Workload = rng.IntN(4) == 0
	return cfg.withDefaults()
}
