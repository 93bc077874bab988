package migrate

import (
	"encoding/json"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// strictDecoder refuses unknown and duplicate fields, and field names in
// the wrong case, as the API server's field validation does.
var strictDecoder = serializer.NewCodecFactory(cli.Scheme(), serializer.EnableStrict).UniversalDeserializer()

// decodeStrictly decodes obj into into, failing the migration when obj is
// not a valid object of our types: every field was mapped by name, so an
// error here is in a field copied as is (a pod template field misspelt in
// the input, a value of the wrong type).
func (m *migration) decodeStrictly(obj map[string]any, into runtime.Object) bool {
	js, err := json.Marshal(obj)
	if err != nil {
		m.fail("encoding the result: %w", err)
		return false
	}
	if _, _, err := strictDecoder.Decode(js, nil, into); err != nil {
		m.fail("the result is not a valid %s: %w", obj["kind"], err)
		return false
	}
	return true
}

// validateExtendedDaemonSet decodes the result strictly, then checks the
// rules of our schema that the original project did not have, so that
// what it accepted and we refuse is told here rather than at apply.
func (m *migration) validateExtendedDaemonSet(obj map[string]any) {
	eds := &v1alpha1.ExtendedDaemonSet{}
	if !m.decodeStrictly(obj, eds) {
		return
	}
	canary := eds.Spec.Strategy.Canary
	if canary == nil {
		return
	}
	duration, _ := time.ParseDuration(v1alpha1.DefaultCanaryDuration)
	if canary.Duration != nil {
		duration = canary.Duration.Duration
	}
	if nr := canary.NoRestartsDuration; nr != nil && nr.Duration > duration {
		m.fail("spec.strategy.canary.noRestartsDuration (%s) is longer than the duration (%s), which ExtendedDaemonSet refuses: "+
			"shorten it, or lengthen the duration", nr.Duration, duration)
	}
	// The API server applies the schema's defaults (both checks, with
	// these limits) before its rules.
	pauseMax, failMax := v1alpha1.DefaultAutoPauseMaxRestarts, v1alpha1.DefaultAutoFailMaxRestarts
	if pause := canary.AutoPause; pause != nil && pause.MaxRestarts != nil {
		pauseMax = *pause.MaxRestarts
	}
	if fail := canary.AutoFail; fail != nil && fail.MaxRestarts != nil {
		failMax = *fail.MaxRestarts
	}
	if failMax < pauseMax {
		m.fail("spec.strategy.canary.autoFail.maxRestarts (%d) is below autoPause.maxRestarts (%d), which ExtendedDaemonSet "+
			"refuses even when one of them is disabled or left out: raise autoFail.maxRestarts", failMax, pauseMax)
	}
	manual := canary.ValidationMode == v1alpha1.CanaryValidationManual
	if fail := canary.AutoFail; fail != nil && fail.CanaryTimeout != nil && !manual && fail.CanaryTimeout.Duration <= duration {
		m.fail("spec.strategy.canary.autoFail.canaryTimeout (%s) is not longer than the duration (%s), which ExtendedDaemonSet "+
			"refuses even when autoFail is disabled: lengthen it", fail.CanaryTimeout.Duration, duration)
	}
}
