// Package harness is what the tests outside the controllers package start:
// envtest API servers with the product's CRDs (from testenv, which it
// re-exports), and the product's reconcilers wired as cmd/manager wires
// them. The simulated cluster (scheduler, controller manager and fake nodes
// on top) lives in the simcluster subpackage.
package harness

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

// AssetsDir returns the directory of the control-plane binaries; see
// testenv.AssetsDir.
func AssetsDir() (string, error) { return testenv.AssetsDir() }

// RepoRoot returns the directory of the product go.mod; see testenv.RepoRoot.
func RepoRoot() string { return testenv.RepoRoot() }

// Scheme holds the core kinds and the extendeddaemonset.io kinds.
func Scheme() *runtime.Scheme { return testenv.Scheme() }

// StartEnvtest starts an API server with the CRDs of crdDirs; see
// testenv.Start.
func StartEnvtest(crdDirs ...string) (*envtest.Environment, *rest.Config, error) {
	return testenv.Start(crdDirs...)
}

// RunWithEnvtest is the body of a TestMain that needs an API server with
// the product's CRDs; see testenv.Run.
func RunWithEnvtest(run func(env *envtest.Environment, c client.Client) int) int {
	return testenv.Run(run)
}
