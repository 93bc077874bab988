package manifests

import (
	"context"
	"testing"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

// Every webhook type is accepted, the gates with their interval, timeout
// and onTimeout, the requests with their Secrets.
func TestCanaryWebhooksAreAccepted(t *testing.T) {
	testenv.RequireAssets(t)
	obj := fromYAML(t, validEDS)
	obj.SetName("webhooks")
	secret := func(key string) map[string]any { return map[string]any{"name": "hooks", "key": key} }
	start := webhook("ticket", "confirm-start", "timeout", "2h", "onTimeout", "Pause")
	start["headersFrom"] = map[string]any{"name": "hook-headers"}
	step := webhook("window", "confirm-step", "interval", "5s")
	delete(step, "url")
	step["urlFrom"] = secret("window-url")
	event := webhook("chat", "event")
	event["signingKeyFrom"] = secret("signing-key")
	event["requestTimeout"], event["retries"] = "5s", int64(3)
	webhooks(start, step, webhook("smoke-test", "confirm-promotion", "onTimeout", "Fail"), event, webhook("pager", "rollback"))(obj.Object)
	if err := create(context.Background(), t, obj); err != nil {
		t.Fatalf("webhooks of every type were refused: %v", err)
	}
}
