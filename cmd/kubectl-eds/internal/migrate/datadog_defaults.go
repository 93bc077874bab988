package migrate

import (
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// The original project's defaults (api/v1alpha1/extendeddaemonset_default.go
// there) that differ from ours. A field the original left to them is
// written out, so that the migrated object behaves as the original did.
// Its canary restart checks (autoPause 2, autoFail 5, noRestartsDuration
// 5m) are ours too (v1alpha1.DefaultAutoPauseMaxRestarts...), but for one
// case writeCanaryDefaults handles.
const originalSlowStartInterval = "1m"

func (m *migration) writeOriginalDefaults(spec map[string]any) {
	if canary, ok := getPath(spec, "strategy", "canary").(map[string]any); ok {
		m.writeCanaryDefaults(canary)
	}
	if rollingUpdate, ok := getPath(spec, "strategy", "rollingUpdate").(map[string]any); ok {
		if rollingUpdate["slowStartAdditiveIncrease"] != nil && rollingUpdate["slowStartIntervalDuration"] == nil {
			rollingUpdate["slowStartIntervalDuration"] = originalSlowStartInterval
			m.note("spec.strategy.rollingUpdate.slowStartIntervalDuration", "set to "+originalSlowStartInterval+
				", the original's default: unset here, slow start doubles its batches and slowStartAdditiveIncrease has no effect")
		}
	}
}

// writeCanaryDefaults writes out the original's noRestartsDuration for an
// auto canary whose autoPause and autoFail are both disabled: the original
// held promotion on recent restarts all the same, while here, unset, it
// holds only while one of them is on.
func (m *migration) writeCanaryDefaults(canary map[string]any) {
	if canary["validationMode"] == string(v1alpha1.CanaryValidationManual) || canary["noRestartsDuration"] != nil ||
		!disabled(canary["autoPause"]) || !disabled(canary["autoFail"]) {
		return
	}
	// Here noRestartsDuration may not exceed the duration; the original's
	// 5m default did, for canaries shorter than that.
	noRestarts := v1alpha1.DefaultNoRestartsDuration
	if s, ok := canary["duration"].(string); ok {
		d, err := time.ParseDuration(s)
		if longest, _ := time.ParseDuration(v1alpha1.DefaultNoRestartsDuration); err == nil && d < longest {
			noRestarts = s
		}
	}
	canary["noRestartsDuration"] = noRestarts
	m.note("spec.strategy.canary.noRestartsDuration", "set to "+noRestarts+", the original's default for auto canaries "+
		"(at most the duration): unset here, with autoPause and autoFail both disabled, a restart late in the canary does not hold its promotion")
}

// disabled says whether an autoPause or autoFail of the input says
// enabled: false; left out, both are on, here as in the original.
func disabled(check any) bool {
	c, ok := check.(map[string]any)
	return ok && c["enabled"] == false
}
