package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/test/exporters/appmetrics"
	"github.com/extendeddaemonset/extendeddaemonset/test/exporters/kubestate"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/prometheus"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/simcluster"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/kubeapply"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/managerproc"
)

// zones are the values of topology.kubernetes.io/zone the nodes take in
// turn.
var zones = []string{"zone-a", "zone-b"}

// demoNamespace holds the demo ExtendedDaemonSet and its pods.
const demoNamespace = "default"

// environmentOptions configures startEnvironment.
type environmentOptions struct {
	nodes int
	// kubeconfig is where the cluster's admin kubeconfig is written.
	kubeconfig string
	// manager is the binary built from cmd/manager.
	manager string
	// dir holds everything else the environment writes; stop removes it.
	dir string
}

// environment is the demo's world: a simulated cluster, the controller run
// as its own process, the demo agent's metrics and a Prometheus scraping
// them.
type environment struct {
	opts    environmentOptions
	cluster *simcluster.Cluster
	client  client.Client
	prom    *prometheus.Server
	manager *managerproc.Manager
	closers []io.Closer

	stopTraffic context.CancelFunc
	traffic     sync.WaitGroup
}

// startEnvironment brings every part up in order, or stops what it started
// and returns why.
func startEnvironment(ctx context.Context, opts environmentOptions, log func(string, ...any)) (env *environment, err error) {
	env = &environment{opts: opts}
	defer func() {
		if err != nil {
			err = errors.Join(err, env.stop())
			env = nil
		}
	}()
	log("starting a simulated cluster: %d fake nodes in %v", opts.nodes, zones)
	if env.cluster, err = simcluster.Start(ctx, simcluster.Options{
		Nodes: opts.nodes, KubeconfigPath: opts.kubeconfig,
	}); err != nil {
		return env, err
	}
	if env.client, err = client.New(env.cluster.Config(), client.Options{Scheme: scheme()}); err != nil {
		return env, fmt.Errorf("creating a client: %w", err)
	}
	if err = env.spreadNodes(ctx); err != nil {
		return env, err
	}
	log("installing config/default (CRDs, RBAC) with client-side kubectl apply -k semantics")
	if err = env.install(ctx); err != nil {
		return env, err
	}
	log("starting the demo agent's metrics and Prometheus")
	if err = env.startMetrics(ctx); err != nil {
		return env, err
	}
	log("starting the controller (log: %s)", env.managerLog())
	env.manager, err = managerproc.Start(ctx, managerproc.Options{
		Name: "manager", Binary: opts.manager, Kubeconfig: env.cluster.KubeconfigPath(), LogPath: env.managerLog(),
	})
	return env, err
}

func (e *environment) managerLog() string { return filepath.Join(e.opts.dir, "manager.log") }

// spreadNodes puts the nodes in the zones in turn.
func (e *environment) spreadNodes(ctx context.Context) error {
	var nodes corev1.NodeList
	if err := e.client.List(ctx, &nodes); err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	for i := range nodes.Items {
		node := &nodes.Items[i]
		patch := client.MergeFrom(node.DeepCopy())
		node.Labels[corev1.LabelTopologyZone] = zones[i%len(zones)]
		if err := e.client.Patch(ctx, node, patch); err != nil {
			return fmt.Errorf("labelling node %s: %w", node.Name, err)
		}
	}
	return nil
}

// install applies config/default as `kubectl apply -k` does, but for the
// controller's Deployment: the controller runs on this machine, where its
// log is at hand, rather than on a fake node where it would not run at all.
func (e *environment) install(ctx context.Context) error {
	objs, err := kubeapply.Render(filepath.Join(harness.RepoRoot(), "config", "default"))
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if obj.GetKind() == "Deployment" {
			continue
		}
		if err := kubeapply.ClientSide(ctx, e.client, obj); err != nil {
			return err
		}
		if obj.GetKind() == "CustomResourceDefinition" {
			if err := e.waitEstablished(ctx, obj.GetName()); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *environment) waitEstablished(ctx context.Context, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := e.client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return false, nil //nolint:nilerr // the API server may not serve it yet
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s not established: %w", name, err)
	}
	return nil
}

// startMetrics starts the demo agent's request counters, kube-state-style
// pod metrics for the restarts check, and a Prometheus scraping both every
// second.
func (e *environment) startMetrics(ctx context.Context) error {
	app, err := appmetrics.Start(appmetrics.Options{})
	if err != nil {
		return err
	}
	e.closers = append(e.closers, app)
	state, err := kubestate.Start(e.client, kubestate.Options{Namespace: demoNamespace})
	if err != nil {
		return err
	}
	e.closers = append(e.closers, state)
	e.prom, err = prometheus.Start(ctx, prometheus.Options{
		Targets: []string{app.Addr(), state.Addr()}, Dir: filepath.Join(e.opts.dir, "prometheus"),
	})
	if err != nil {
		return err
	}
	trafficCtx, cancel := context.WithCancel(context.Background())
	e.stopTraffic = cancel
	agents := &agentTraffic{c: e.client, namespace: demoNamespace, app: app}
	e.traffic.Go(func() { agents.follow(trafficCtx) })
	return nil
}

// stop stops everything started, the controller first and the cluster
// last, and removes the kubeconfig and the environment's directory.
func (e *environment) stop() error {
	var errs []error
	if e.manager != nil {
		errs = append(errs, e.manager.Stop())
	}
	if e.stopTraffic != nil {
		e.stopTraffic()
		e.traffic.Wait()
	}
	if e.prom != nil {
		errs = append(errs, e.prom.Close())
	}
	for _, c := range e.closers {
		errs = append(errs, c.Close())
	}
	if e.cluster != nil {
		errs = append(errs, e.cluster.Stop())
	}
	if err := os.Remove(e.opts.kubeconfig); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	errs = append(errs, os.RemoveAll(e.opts.dir))
	return errors.Join(errs...)
}
