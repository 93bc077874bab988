package manifests

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

// stepsOf is a canary of three steps in place of replicas and duration.
func stepsOf(steps ...any) []mutation {
	return []mutation{del(canary + ".replicas"), del(canary + ".duration"), set(canary+".steps", append([]any{}, steps...))}
}

func step(replicas any, fields map[string]any) map[string]any {
	out := map[string]any{"replicas": replicas}
	for k, v := range fields {
		out[k] = v
	}
	return out
}

var threeSteps = stepsOf(
	step(int64(1), map[string]any{"duration": "5m"}),
	step("10%", map[string]any{"duration": "10m"}),
	step("50%", map[string]any{"pause": true}),
)

func TestCanaryStepsAreAccepted(t *testing.T) {
	testenv.RequireAssets(t)
	obj := fromYAML(t, validEDS)
	for _, change := range threeSteps {
		change(obj.Object)
	}
	if err := create(context.Background(), t, obj); err != nil {
		t.Fatalf("a canary with steps was refused: %v", err)
	}
}

func TestInvalidCanaryStepsAreRefused(t *testing.T) {
	testenv.RequireAssets(t)
	with := func(extra ...mutation) []mutation { return append(append([]mutation{}, threeSteps...), extra...) }
	cases := []invalidCase{
		{"steps with replicas", validEDS, with(set(canary+".replicas", int64(2))), canary, "replicas and duration cannot be set with steps"},
		{"steps with duration", validEDS, with(set(canary+".duration", "10m")), canary, "replicas and duration cannot be set with steps"},
		{"steps with manual validation", validEDS, with(set(canary+".validationMode", "manual"), del(canary+".noRestartsDuration")), canary, "end the steps with a pause: true step"},
		{"step with neither duration nor pause", validEDS, stepsOf(step(int64(1), nil)), canary + ".steps[0]", "either a duration or pause: true"},
		{"step with duration and pause", validEDS, stepsOf(step(int64(1), map[string]any{"duration": "1m", "pause": true})), canary + ".steps[0]", "either a duration or pause: true"},
		{"step replicas zero", validEDS, stepsOf(step(int64(0), map[string]any{"duration": "1m"})), canary + ".steps[0].replicas", "step replicas must be"},
		{"step duration zero", validEDS, stepsOf(step(int64(1), map[string]any{"duration": "0s"})), canary + ".steps[0].duration", "positive duration"},
		{"noRestartsDuration longer than a step", validEDS, with(set(canary+".noRestartsDuration", "6m")), canary, "noRestartsDuration must not be longer than the duration of any step"},
		{"canaryTimeout within the steps", validEDS, with(set(canary+".autoFail.canaryTimeout", "15m")), canary, "longer than the durations of the steps together"},
		{"empty steps", validEDS, stepsOf(), canary + ".steps", "should have at least 1 items"},
		{"skipStep malformed", validEDS, with(set(canary+".skipStep", "2")), canary + ".skipStep", "should match"},
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := fromYAML(t, tc.base)
			for _, change := range tc.changes {
				change(obj.Object)
			}
			err := create(ctx, t, obj)
			if !apierrors.IsInvalid(err) {
				t.Fatalf("want an Invalid error, got %v", err)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.field+":") || !strings.Contains(msg, tc.message) {
				t.Errorf("the error does not name %q and say %q:\n%s", tc.field, tc.message, msg)
			}
		})
	}
}
