package prometheus

import "github.com/extendeddaemonset/extendeddaemonset/test/harness"

// PromtoolPath returns the promtool binary built with Prometheus, which
// checks rule files.
func PromtoolPath() (string, error) { return harness.AssetPath("promtool") }
