package prometheus

import "github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"

// PromtoolPath returns the promtool binary built with Prometheus, which
// checks rule files.
func PromtoolPath() (string, error) { return testenv.AssetPath("promtool") }
