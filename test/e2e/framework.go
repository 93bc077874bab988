// Package e2e holds the end-to-end suites: the real reconcilers run in the
// test process against one simulated cluster (see test/harness/simcluster)
// whose fake nodes run pods through the real scheduler and garbage collector.
//
// Suites share the cluster that TestMain starts with StartEnv, so they run
// one after the other: each works in a namespace of its own and gives back
// any node it changed.
package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/extendeddaemonset/extendeddaemonset/analysis/web"
	"github.com/extendeddaemonset/extendeddaemonset/controllers"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/simcluster"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/daemon"
)

// EnvOptions configures StartEnv.
type EnvOptions struct {
	// Nodes is the number of fake nodes, named node-0 to node-<Nodes-1>.
	Nodes int
	// MaxConcurrentReconciles is passed to the controllers.
	MaxConcurrentReconciles int
	// NativeDaemonSetController runs kube-controller-manager's DaemonSet
	// controller, the peer of a migration from a DaemonSet. It acts on
	// DaemonSets and their pods only, never on ExtendedDaemonSets.
	NativeDaemonSetController bool
	// AllowedWebhookHosts is the controllers' --allowed-webhook-hosts: the
	// tests' receivers listen on loopback, which is refused by default.
	AllowedWebhookHosts []string
}

// Env is a simulated cluster with the controllers running against it.
type Env struct {
	Cluster *simcluster.Cluster
	// Client reads and writes through the API server, never a cache, with
	// the core and extendeddaemonset.io kinds.
	Client  client.Client
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface

	// MetricsAddr is where the controllers serve their metrics, as the
	// manager does: HTTPS, for callers the API server authorizes.
	MetricsAddr string

	// KeepLog leaves the controllers' log in place at Stop, for a run that
	// failed.
	KeepLog bool

	logPath     string
	logFile     *os.File
	opts        EnvOptions
	controllers *harness.Controllers
}

// StartEnv starts a simulated cluster with the CRDs of config/crd/bases,
// then the controllers as cmd/manager wires them, and returns once their
// cache has synced. ctx bounds the start-up only. On error nothing is left
// running.
func StartEnv(ctx context.Context, opts EnvOptions) (_ *Env, err error) {
	logFile, err := os.CreateTemp("", "e2e-controllers-*.log")
	if err != nil {
		return nil, fmt.Errorf("creating controller log: %w", err)
	}
	ports, err := daemon.FreePorts(1)
	if err != nil {
		return nil, err
	}
	env := &Env{logPath: logFile.Name(), logFile: logFile, opts: opts, MetricsAddr: net.JoinHostPort("127.0.0.1", ports[0])}
	defer func() {
		if err != nil {
			err = errors.Join(err, env.Stop())
		}
	}()
	// As in any real cluster, the pod garbage collector force-deletes the
	// pods of a deleted node, which no kubelet will ever finalize.
	extra := []string{"pod-garbage-collector-controller"}
	if opts.NativeDaemonSetController {
		extra = append(extra, "daemonset-controller")
	}
	env.Cluster, err = simcluster.Start(ctx, simcluster.Options{
		Nodes:            opts.Nodes,
		CRDDirs:          []string{filepath.Join(harness.RepoRoot(), "config", "crd", "bases")},
		ExtraControllers: extra,
	})
	if err != nil {
		return env, err
	}
	cfg := env.Cluster.Config()
	if env.Client, err = client.New(cfg, client.Options{Scheme: harness.Scheme()}); err != nil {
		return env, fmt.Errorf("creating client: %w", err)
	}
	if env.Kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return env, fmt.Errorf("creating clientset: %w", err)
	}
	if env.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return env, fmt.Errorf("creating dynamic client: %w", err)
	}
	return env, env.startControllers(ctx, opts)
}

// startControllers runs the reconcilers, logging to the controller log.
func (e *Env) startControllers(ctx context.Context, opts EnvOptions) error {
	logger := zap.New(zap.WriteTo(e.logFile), zap.UseDevMode(true))
	klog.SetLogger(logger)
	webHosts, err := web.ParseHostPolicy(opts.AllowedWebhookHosts)
	if err != nil {
		return err
	}
	ctrls, err := harness.StartControllers(ctx, e.Cluster.Config(),
		controllers.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles, WebHosts: webHosts}, logger, harness.WithSecureMetrics(e.MetricsAddr))
	if err != nil {
		return fmt.Errorf("starting controllers: %w", err)
	}
	e.controllers = ctrls
	return nil
}

// RestartControllers stops the controllers and starts new ones, as a
// controller restart or a change of leader would: nothing held in memory
// survives, only what the API objects say.
func (e *Env) RestartControllers(ctx context.Context) error {
	if err := e.StopControllers(); err != nil {
		return err
	}
	return e.StartControllers(ctx)
}

// StopControllers stops the controllers alone: the cluster goes on, and
// nothing reconciles until StartControllers.
func (e *Env) StopControllers() error {
	if err := e.controllers.Stop(); err != nil {
		return fmt.Errorf("stopping controllers: %w", err)
	}
	e.controllers = nil
	return nil
}

// StartControllers starts controllers stopped by StopControllers.
func (e *Env) StartControllers(ctx context.Context) error {
	return e.startControllers(ctx, e.opts)
}

// Stop stops the controllers, then the cluster, and removes the
// controllers' log unless KeepLog is set.
func (e *Env) Stop() error {
	var errs []error
	if e.controllers != nil {
		if err := e.controllers.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("controllers: %w", err))
		}
		e.controllers = nil
	}
	if e.Cluster != nil {
		errs = append(errs, e.Cluster.Stop())
	}
	if e.logFile != nil {
		errs = append(errs, e.logFile.Close())
		if !e.KeepLog {
			errs = append(errs, os.Remove(e.logPath))
		}
		e.logFile = nil
	}
	return errors.Join(errs...)
}

// DumpLogs writes the last lines of every component's log and of the
// controllers' log to w, for a test that failed.
func (e *Env) DumpLogs(w io.Writer, lines int) {
	e.Cluster.DumpLogs(w, lines)
	data, err := os.ReadFile(e.logPath)
	if err != nil {
		fmt.Fprintf(w, "no controller log: %v\n", err)
		return
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	// The controllers log much more than a component: show more of it.
	all = all[max(0, len(all)-4*lines):]
	fmt.Fprintf(w, "==== controllers (%s) ====\n%s\n", e.logPath, strings.Join(all, "\n"))
}

// LogPath is the file the controllers log to.
func (e *Env) LogPath() string { return e.logPath }
