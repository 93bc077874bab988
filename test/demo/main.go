// Command demo shows ExtendedDaemonSet at work on this machine, with
// nothing but Go installed. `make run` builds it into bin/demo and runs it
// live:
//
//	bin/demo --manager bin/manager --kubeconfig ~/.cache/extendeddaemonset/run.kubeconfig
//
// starts a simulated cluster (fake nodes in two zones), installs
// config/default as `kubectl apply -k` would, starts a Prometheus scraping a
// demo agent's metrics and the controller, rolls the demo ExtendedDaemonSet
// out, starts a second version as a canary judged by Prometheus, and prints
// what to type next. It runs until interrupted, then stops everything and
// removes what it wrote.
//
// `make demo` plays a scripted story, as the kubectl eds plugin shows it:
//
//	bin/demo --story --manager bin/manager --plugin bin/kubectl-eds --kubeconfig ~/.cache/extendeddaemonset/run.kubeconfig
//
// on the cluster of a running `make run` when that kubeconfig reaches one,
// else on a cluster of its own that it stops at the end. KUBEBUILDER_ASSETS
// must name the control-plane binaries ("make testbin" prints the directory).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/test/internal/proc"
)

// startTimeout bounds the environment's start-up: a cluster, Prometheus and
// the controller take about 20 seconds on 2 cores.
const startTimeout = 3 * time.Minute

type options struct {
	nodes                       int
	kubeconfig, manager, plugin string
	story                       bool
}

func main() { os.Exit(run()) }

func run() int {
	var opts options
	flags := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	flags.IntVar(&opts.nodes, "nodes", 6, "number of fake nodes, spread over two zones")
	flags.StringVar(&opts.kubeconfig, "kubeconfig", "", "where to write the cluster's admin kubeconfig; with --story, the kubeconfig of a running demo to play on, if it reaches one")
	flags.StringVar(&opts.manager, "manager", "bin/manager", "the manager binary (make build)")
	flags.StringVar(&opts.plugin, "plugin", "bin/kubectl-eds", "the kubectl eds plugin binary (make build-plugin), for --story")
	flags.BoolVar(&opts.story, "story", false, "play the scripted story, then exit")
	_ = flags.Parse(os.Args[1:]) // ExitOnError
	if err := validate(opts); err != nil {
		logf("%v", err)
		return 2
	}

	// Registered before anything starts, so that a signal never kills this
	// process while it owns a cluster.
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	if err := proc.TerminateWithParent(); err != nil {
		logf("%v", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		sig := <-signals
		logf("received %v, stopping", sig)
		cancel()
	}()

	var err error
	if opts.story {
		err = playStory(ctx, opts)
	} else {
		err = runLive(ctx, opts)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		logf("%v", err)
		return 1
	}
	return 0
}

func validate(opts options) error {
	if opts.nodes < 4 {
		return fmt.Errorf("--nodes %d: the demo needs at least 4 nodes, 2 per zone, for a canary per zone and a rollout after it", opts.nodes)
	}
	if opts.kubeconfig == "" {
		return errors.New("--kubeconfig is required: where the cluster's admin kubeconfig goes")
	}
	if _, err := os.Stat(opts.manager); err != nil {
		return fmt.Errorf("--manager: %w (make build builds it)", err)
	}
	if opts.story {
		if _, err := os.Stat(opts.plugin); err != nil {
			return fmt.Errorf("--plugin: %w (make build-plugin builds it)", err)
		}
	}
	return nil
}

// withEnvironment runs fn on a new environment and stops it afterwards,
// whatever fn returned.
func withEnvironment(ctx context.Context, opts options, kubeconfig string, fn func(*environment) error) (err error) {
	dir, err := os.MkdirTemp("", "eds-demo-")
	if err != nil {
		return fmt.Errorf("creating the demo directory: %w", err)
	}
	startCtx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	env, err := startEnvironment(startCtx, environmentOptions{
		nodes: opts.nodes, kubeconfig: kubeconfig, manager: opts.manager, dir: dir,
	}, logf)
	if err != nil {
		return errors.Join(err, os.RemoveAll(dir))
	}
	defer func() {
		logf("stopping the controller, Prometheus and the cluster")
		if stopErr := env.stop(); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
	}()
	return fn(env)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "demo: "+format+"\n", args...)
}
