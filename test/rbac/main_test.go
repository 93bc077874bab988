// Package rbac runs the controllers against an API server that enforces
// RBAC, authenticated as the manager's ServiceAccount and bound by the
// roles and bindings config/default ships, so a grant the code needs but the
// roles lack fails here rather than in a cluster.
package rbac

import (
	"fmt"
	"os"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness"
)

var (
	// k8s is the admin: it plays the user, the scheduler and the kubelet.
	k8s client.Client
	// manager is the configuration of the manager's ServiceAccount.
	manager *rest.Config
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	return harness.RunWithEnvtest(func(env *envtest.Environment, c client.Client) int {
		k8s = c
		var err error
		if manager, err = managerConfig(env, env.Config); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return m.Run()
	})
}

// managerConfig installs the shipped RBAC and returns a configuration
// authenticated as the ServiceAccount it binds, as the API server would
// see the manager's pod.
func managerConfig(env *envtest.Environment, admin *rest.Config) (*rest.Config, error) {
	if err := installRBAC(); err != nil {
		return nil, err
	}
	user, err := env.AddUser(envtest.User{
		Name:   "system:serviceaccount:" + managerNamespace + ":" + serviceAccount,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + managerNamespace},
	}, admin)
	if err != nil {
		return nil, fmt.Errorf("adding the manager's user: %w", err)
	}
	return user.Config(), nil
}
