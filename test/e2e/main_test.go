package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// clusterNodes is the size of the shared cluster; a test that needs other
// nodes adds its own and deletes them after.
const clusterNodes = 24

// env is the cluster and controllers every test of the package uses.
var env *Env

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var err error
	// The DaemonSet controller runs for the migration tests; no other test
	// creates a DaemonSet.
	env, err = StartEnv(ctx, EnvOptions{
		Nodes: clusterNodes, MaxConcurrentReconciles: 4, NativeDaemonSetController: true,
		// The tests' web receivers listen on 127.0.0.1, as the manager's
		// --allowed-webhook-hosts=127.0.0.1 lets them.
		AllowedWebhookHosts: []string{"127.0.0.1"},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the end-to-end environment: %v\n", err)
		return 1
	}
	// A failed test dumps the logs itself (see newScenario), while they
	// still show what went wrong.
	code := m.Run()
	if code != 0 {
		env.KeepLog = true
		fmt.Fprintf(os.Stderr, "controller log kept in %s\n", env.LogPath())
	}
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the end-to-end environment: %v\n", err)
		code = max(code, 1)
	}
	return code
}
