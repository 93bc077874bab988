package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/simcluster"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/managerproc"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/rbacinstall"
)

// profile is how much chaos a run makes.
type profile struct {
	name  string
	nodes int
	// kills are the SIGKILLs of the kill scenario; maxUptime bounds how
	// long a manager leads before one.
	kills     int
	maxUptime time.Duration
	// faultRate is the share of the manager's requests the fault proxy
	// answers with a fault, for one rollout, while watchLag delays every
	// watch event the manager gets.
	faultRate float64
	watchLag  time.Duration
	// canary is the canary duration of the rollouts under kills and
	// faults. failoverCanary is that of the failover: long enough that the
	// takeover, 10 to 15s after the kill, happens in its middle.
	canary, failoverCanary time.Duration
	// rolloutTimeout bounds a wait for a rollout, so that a stuck one
	// fails the test with what it waited for; nothing is asserted about
	// speed.
	rolloutTimeout time.Duration
	// walkSteps are the actions of the random walk, on walkNodes nodes of
	// its own, each wait at most walkMaxWait.
	walkSteps   int
	walkNodes   int
	walkMaxWait time.Duration
}

var profiles = map[string]profile{
	"short": {
		name: "short", nodes: 40, kills: 3, maxUptime: 8 * time.Second, faultRate: 0.1, watchLag: time.Second,
		canary: 10 * time.Second, failoverCanary: time.Minute, rolloutTimeout: 5 * time.Minute,
		walkSteps: 60, walkNodes: 6, walkMaxWait: 15 * time.Second,
	},
	"full": {
		name: "full", nodes: 500, kills: 20, maxUptime: 8 * time.Second, faultRate: 0.1, watchLag: time.Second,
		canary: 30 * time.Second, failoverCanary: 90 * time.Second, rolloutTimeout: 15 * time.Minute,
		walkSteps: 300, walkNodes: 12, walkMaxWait: 30 * time.Second,
	},
}

// Environment variables of a run; see the package documentation.
const (
	profileEnv = "CHAOS"
	seedEnv    = "CHAOS_SEED"
	reportEnv  = "CHAOS_REPORT"
)

var (
	prof   profile
	seed   uint64
	report *Report

	setUpOnce sync.Once
	env       *environment
	setUpErr  error
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	name := os.Getenv(profileEnv)
	if name == "" {
		name = "short"
	}
	var ok bool
	if prof, ok = profiles[name]; !ok {
		fmt.Fprintf(os.Stderr, "%s=%q: want short or full\n", profileEnv, name)
		return 2
	}
	seed = uint64(time.Now().UnixNano())
	if v := os.Getenv(seedEnv); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			fmt.Fprintf(os.Stderr, "%s=%q: %v\n", seedEnv, v, err)
			return 2
		}
	}
	// Printed first, so that a run that never reaches the table can be
	// replayed too.
	fmt.Printf("chaos %s: %d nodes, seed %d\n", prof.name, prof.nodes, seed)
	report = &Report{Profile: prof.name, Nodes: prof.nodes, Seed: seed}
	// The monitor's informers log through controller-runtime; what they
	// would say is in the monitor's report.
	ctrllog.SetLogger(logr.Discard())

	code := m.Run()
	if env != nil {
		if err := env.stop(code != 0); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the chaos environment: %v\n", err)
			code = max(code, 1)
		}
	}
	if len(report.Scenarios) == 0 {
		return code
	}
	if err := report.WriteTable(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if path := os.Getenv(reportEnv); path != "" {
		if err := report.WriteJSON(path); err != nil {
			fmt.Fprintf(os.Stderr, "writing %s: %v\n", path, err)
			code = max(code, 1)
		}
	}
	return code
}

// environment is the simulated cluster the scenarios share, one after the
// other, and the manager they run against it.
type environment struct {
	dir     string
	cluster *simcluster.Cluster
	admin   *rest.Config
	client  client.Client
	kube    kubernetes.Interface
	// binary is the manager built from cmd/manager.
	binary string
	// identity is the manager's ServiceAccount, and kubeconfig the file
	// that gives it to the manager, straight to the API server.
	identity   *rest.Config
	kubeconfig string
}

// setUp starts the environment for the first scenario that needs it, so
// that the unit tests of the package need no cluster.
func setUp(t *testing.T) *environment {
	t.Helper()
	setUpOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		env, setUpErr = startEnvironment(ctx)
		if setUpErr != nil && env != nil {
			setUpErr = errors.Join(setUpErr, env.stop(false))
			env = nil
		}
	})
	if setUpErr != nil {
		t.Fatalf("setting up the chaos environment: %v", setUpErr)
	}
	return env
}

// startEnvironment builds the manager, starts the cluster and installs the
// manager's ServiceAccount and grants. On error, what it returns holds
// what was started.
func startEnvironment(ctx context.Context) (*environment, error) {
	dir, err := os.MkdirTemp("", "chaos-")
	if err != nil {
		return nil, err
	}
	e := &environment{dir: dir, binary: filepath.Join(dir, "manager"), kubeconfig: filepath.Join(dir, "manager.kubeconfig")}
	if err := managerproc.Build(ctx, e.binary); err != nil {
		return e, err
	}
	e.cluster, err = simcluster.Start(ctx, simcluster.Options{
		Nodes:   prof.nodes,
		CRDDirs: []string{filepath.Join(testenv.RepoRoot(), "config", "crd", "bases")},
	})
	if err != nil {
		return e, err
	}
	e.admin = e.cluster.Config()
	if e.client, err = client.New(e.admin, client.Options{Scheme: testenv.Scheme()}); err != nil {
		return e, err
	}
	if e.kube, err = kubernetes.NewForConfig(e.admin); err != nil {
		return e, err
	}
	if err := rbacinstall.Install(ctx, e.client); err != nil {
		return e, err
	}
	// Valid well past the longest run.
	if e.identity, err = ServiceAccountConfig(ctx, e.admin, rbacinstall.Namespace, rbacinstall.ServiceAccount, 3*time.Hour); err != nil {
		return e, err
	}
	return e, WriteKubeconfig(e.identity, e.kubeconfig)
}

// stop stops the cluster and removes the directory of the manager's logs,
// unless keep is set for a run that failed.
func (e *environment) stop(keep bool) error {
	var errs []error
	if e.cluster != nil {
		errs = append(errs, e.cluster.Stop())
	}
	if keep {
		fmt.Fprintf(os.Stderr, "manager logs kept in %s\n", e.dir)
	} else {
		errs = append(errs, os.RemoveAll(e.dir))
	}
	return errors.Join(errs...)
}
