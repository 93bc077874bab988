// Command simcluster runs a simulated cluster (see package
// test/harness/simcluster) until interrupted, or for as long as a command
// given after "--" runs:
//
//	go run ./test/simcluster --nodes 20 --kubeconfig /tmp/kc [--crds config/crd/bases] [-- command args...]
//
// The command runs with KUBECONFIG set to the cluster's admin kubeconfig and
// in a process group of its own, which receives SIGINT and SIGTERM exactly
// once each time simcluster does (so a program that treats a second signal as
// "exit now" shuts down gracefully); a command reading the terminal is
// therefore not supported. When it exits, the cluster is torn down and
// simcluster exits with its code. KUBEBUILDER_ASSETS must name the
// control-plane binaries ("make testbin" prints the directory).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/simcluster"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/proc"
)

// commandGrace is how long the command's leftover processes get after it
// exits before they are killed.
const commandGrace = 5 * time.Second

// listFlag collects a repeatable, comma-separated flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for item := range strings.SplitSeq(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			*l = append(*l, item)
		}
	}
	return nil
}

func main() { os.Exit(run()) }

func run() int {
	var opts simcluster.Options
	var crds, controllers listFlag
	var verbose bool
	// A flag set of its own: imported packages register flags such as
	// --kubeconfig on the global one.
	flags := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	flags.IntVar(&opts.Nodes, "nodes", 3, "number of fake nodes")
	flags.StringVar(&opts.KubeconfigPath, "kubeconfig", "", "where to write the admin kubeconfig (default: a file in the cluster's temporary directory)")
	flags.Var(&crds, "crds", "directory of CRD manifests to install; repeatable or comma-separated")
	flags.Var(&controllers, "controllers", `extra kube-controller-manager controllers besides the garbage collector, e.g. "daemonset-controller"; repeatable or comma-separated`)
	flags.BoolVar(&verbose, "verbose", false, "copy every component's log to stderr")
	flags.Usage = func() {
		fmt.Fprintf(flags.Output(), "usage: %s [flags] [-- command args...]\n", os.Args[0])
		flags.PrintDefaults()
	}
	_ = flags.Parse(os.Args[1:]) // ExitOnError
	opts.CRDDirs, opts.ExtraControllers = crds, controllers
	if verbose {
		opts.Logs = os.Stderr
	}

	// Registered before anything starts, so that a signal never kills this
	// process while it owns a cluster.
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	if err := proc.TerminateWithParent(); err != nil {
		logf("%v", err)
		return 1
	}

	cluster, err := start(opts, signals)
	if err != nil {
		logf("%v", err)
		return 1
	}
	defer func() {
		logf("stopping the cluster")
		if err := cluster.Stop(); err != nil {
			logf("%v", err)
		}
	}()
	fmt.Printf("simcluster ready: %d nodes; kubeconfig %s\nexport KUBECONFIG=%s\n",
		opts.Nodes, cluster.KubeconfigPath(), cluster.KubeconfigPath())

	if flags.NArg() == 0 {
		sig := <-signals
		logf("received %v", sig)
		return 0
	}
	return runCommand(flags.Args(), cluster.KubeconfigPath(), signals)
}

// start starts the cluster, giving up if a signal arrives first.
func start(opts simcluster.Options, signals <-chan os.Signal) (*simcluster.Cluster, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	defer close(started)
	go func() {
		select {
		case sig := <-signals:
			logf("received %v during start-up", sig)
			cancel()
		case <-started:
		}
	}()
	cluster, err := simcluster.Start(ctx, opts)
	if err == nil && ctx.Err() != nil {
		// The signal arrived as the start-up finished.
		return nil, errors.Join(ctx.Err(), cluster.Stop())
	}
	return cluster, err
}

// runCommand runs args with KUBECONFIG set, forwards signals to its process
// group, and returns the exit code to exit with.
func runCommand(args []string, kubeconfig string, signals <-chan os.Signal) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	p, err := proc.Start(cmd)
	if err != nil {
		logf("%v", err)
		return 1
	}
	for running := true; running; {
		select {
		case sig := <-signals:
			logf("forwarding %v to %s", sig, args[0])
			if err := p.Signal(sig.(syscall.Signal)); err != nil {
				logf("%v", err)
			}
		case <-p.Done():
			running = false
		}
	}
	code := exitCode(p.Err())
	logf("%s exited with code %d", args[0], code)
	if err := p.Stop(commandGrace); err != nil {
		logf("%v", err)
	}
	return code
}

// exitCode maps a wait result to a shell-style exit code.
func exitCode(err error) int {
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exitErr):
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exitErr.ExitCode()
	default:
		return 1
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "simcluster: "+format+"\n", args...)
}
