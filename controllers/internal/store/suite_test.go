package store

// The tests that read through a cache need a real API server, with the CRDs:
// started here through test/harness/testenv; a short run skips them.

import (
	"os"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

// k8s is the admin's client of the test API server, adminConfig its
// connection.
var (
	k8s         client.Client
	adminConfig *rest.Config
)

func TestMain(m *testing.M) {
	if testenv.Short() {
		os.Exit(m.Run())
	}
	os.Exit(testenv.Run(func(env *envtest.Environment, c client.Client) int {
		k8s, adminConfig = c, env.Config
		return m.Run()
	}))
}
