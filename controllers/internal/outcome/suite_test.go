package outcome

// The tests that write a status need a real API server, with the CRDs:
// started here through test/harness/testenv; a short run skips them.

import (
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

// k8s is the admin's client of the test API server.
var k8s client.Client

func TestMain(m *testing.M) {
	if testenv.Short() {
		os.Exit(m.Run())
	}
	os.Exit(testenv.Run(func(_ *envtest.Environment, c client.Client) int {
		k8s = c
		return m.Run()
	}))
}
