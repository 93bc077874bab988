package testenv

import (
	"flag"
	"testing"
)

// A short run (go test -short, make unit) is the tests that need none of
// the harness binaries: no API server, etcd, Prometheus or promtool. It
// takes seconds on any machine, with AssetsEnv unset.

// Short reports whether this is a short run, in which a TestMain starts
// nothing: the tests that need what it would start skip. It parses the
// command line first, as m.Run would.
func Short() bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	return testing.Short()
}

// RequireAssets skips t in a short run: t needs the harness binaries.
func RequireAssets(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the harness binaries of " + AssetsEnv + "; a short run skips it")
	}
}
