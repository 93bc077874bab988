package migrate

import (
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// The original project's defaults (api/v1alpha1/extendeddaemonset_default.go
// there) that differ from ours. A field the original left to them is
// written out, so that the migrated object behaves as the original did.
const (
	originalAutoPauseMaxRestarts = 2
	originalAutoFailMaxRestarts  = 5
	originalNoRestartsDuration   = "5m"
	originalSlowStartInterval    = "1m"
)

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

func (m *migration) writeCanaryDefaults(canary map[string]any) {
	// The original turned both on, with these limits, when the canary left
	// them out; here, left out, a canary never pauses or fails by itself.
	if canary["autoPause"] == nil {
		canary["autoPause"] = map[string]any{"enabled": true, "maxRestarts": originalAutoPauseMaxRestarts}
		m.note("spec.strategy.canary.autoPause", "set to enabled with maxRestarts 2, the original's default: unset here, a canary never pauses by itself")
	}
	if canary["autoFail"] == nil {
		canary["autoFail"] = map[string]any{"enabled": true, "maxRestarts": originalAutoFailMaxRestarts}
		m.note("spec.strategy.canary.autoFail", "set to enabled with maxRestarts 5, the original's default: unset here, a canary never fails by itself")
	}
	if canary["validationMode"] == string(v1alpha1.CanaryValidationManual) || canary["noRestartsDuration"] != nil {
		return
	}
	// Here noRestartsDuration may not exceed the duration; the original's
	// 5m default did, for canaries shorter than that.
	noRestarts := originalNoRestartsDuration
	if s, ok := canary["duration"].(string); ok {
		d, err := time.ParseDuration(s)
		if longest, _ := time.ParseDuration(originalNoRestartsDuration); err == nil && d < longest {
			noRestarts = s
		}
	}
	canary["noRestartsDuration"] = noRestarts
	m.note("spec.strategy.canary.noRestartsDuration", "set to "+noRestarts+", the original's default for auto canaries "+
		"(at most the duration): unset here, a restart late in the canary does not hold its promotion")
}
