package clitest

import (
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/envkubelet"
)

// CrashTag in an image's tag makes the kubelet report its container
// crash-looping: not ready, restarted CrashRestarts times.
const (
	CrashTag      = envkubelet.CrashTag
	CrashRestarts = envkubelet.CrashRestarts
)
