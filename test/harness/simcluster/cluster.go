// Package simcluster runs a simulated Kubernetes cluster on this machine:
// etcd, kube-apiserver, kube-scheduler, kube-controller-manager and kwok,
// whose fake nodes take pods from the real scheduler and report them Running
// and Ready. Controllers under test see a cluster that behaves like a real
// one down to scheduling and garbage collection, while a fake node is only an
// API object: a thousand of them are Ready within seconds.
//
// Binaries come from harness.AssetsDir. Every child runs in its own process
// group and Stop leaves none behind; its output goes to LogDir.
package simcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Options configures Start.
type Options struct {
	// Nodes is the number of fake nodes, named node-0 to node-<Nodes-1>.
	Nodes int
	// CRDDirs are directories of CRD manifests installed before Start
	// returns; a missing directory is an error.
	CRDDirs []string
	// ExtraControllers are kube-controller-manager controllers to run besides
	// the garbage collector, such as "daemonset-controller" (or its alias
	// "daemonset") when the native controller is the baseline of a benchmark.
	// Never the node lifecycle controller: fake nodes send no heartbeats, so it
	// would mark them NotReady and evict their pods.
	ExtraControllers []string
	// ExtraArgs are flags appended to a component's defaults, keyed by binary
	// name ("kube-controller-manager", ...); the last value of a flag wins,
	// e.g. {"kube-controller-manager": {"--kube-api-qps=200"}}.
	ExtraArgs map[string][]string
	// KubeconfigPath is where the admin kubeconfig is written; Stop leaves it
	// there. Empty means a file in the cluster's temporary directory.
	KubeconfigPath string
	// Logs, if set, receives every component's output, each line prefixed
	// with the component's name.
	Logs io.Writer
	// ImageUpdateDelay is how long the simulated kubelet takes for each
	// step of an image update on a running pod (stop, start) and to follow
	// a readiness gate turned False; DefaultImageUpdateDelay when zero.
	ImageUpdateDelay time.Duration
	// KubeletWorkers is how many pod status updates the simulated kubelets
	// make at once (kwok's podPlayStageParallelism); kwok's 4 when zero.
	// Real kubelets, one per node, update their pods independently; four
	// workers for a thousand nodes bound an in-place update, three status
	// updates a pod, before any controller does.
	KubeletWorkers int
}

// forbiddenControllers name the node lifecycle controller, alone or in "*".
var forbiddenControllers = []string{"*", "nodelifecycle", "node-lifecycle-controller"}

// Cluster is a running simulated cluster.
type Cluster struct {
	opts           Options
	dir, logDir    string
	kubeconfigPath string
	config         *rest.Config
	client         kubernetes.Interface
	logMu          sync.Mutex

	// stages are the components in start order; components of one stage do
	// not depend on each other and stop in parallel.
	stages [][]*component

	stopOnce sync.Once
	stopErr  error
}

// Start starts a cluster and returns once the API server answers, the
// scheduler and controller manager are healthy, the CRDs are established and
// all nodes are Ready. ctx bounds the start-up only: the cluster runs until
// Stop. On error nothing is left running.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if err := validate(opts); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "simcluster-")
	if err != nil {
		return nil, fmt.Errorf("creating cluster directory: %w", err)
	}
	c := &Cluster{opts: opts, dir: dir, logDir: filepath.Join(dir, "logs"), kubeconfigPath: opts.KubeconfigPath}
	if c.kubeconfigPath == "" {
		c.kubeconfigPath = c.componentKubeconfig()
	}
	if err := c.start(ctx); err != nil {
		if stopErr := c.Stop(); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
		return nil, fmt.Errorf("starting simulated cluster: %w", err)
	}
	return c, nil
}

func validate(opts Options) error {
	if opts.Nodes < 0 {
		return fmt.Errorf("negative node count %d", opts.Nodes)
	}
	for _, name := range opts.ExtraControllers {
		if slices.Contains(forbiddenControllers, name) {
			return fmt.Errorf("controller %q cannot run: the node lifecycle controller would mark fake nodes, which send no heartbeats, NotReady", name)
		}
	}
	for name := range opts.ExtraArgs {
		if !slices.Contains(componentNames, name) {
			return fmt.Errorf("extra arguments for unknown component %q (known: %v)", name, componentNames)
		}
	}
	return nil
}

// Config returns a copy of the admin's client configuration.
func (c *Cluster) Config() *rest.Config { return rest.CopyConfig(c.config) }

// KubeconfigPath is the admin kubeconfig file, for binaries run against the
// cluster.
func (c *Cluster) KubeconfigPath() string { return c.kubeconfigPath }

// Stop stops every component, API server and etcd last, and removes the
// cluster's temporary directory. It is idempotent.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		var errs []error
		for i := len(c.stages) - 1; i >= 0; i-- {
			errs = append(errs, stopAll(c.stages[i]))
		}
		if err := os.RemoveAll(c.dir); err != nil {
			errs = append(errs, fmt.Errorf("removing cluster directory: %w", err))
		}
		c.stopErr = errors.Join(errs...)
	})
	return c.stopErr
}

func stopAll(comps []*component) error {
	errs := make([]error, len(comps))
	var wg sync.WaitGroup
	for i, comp := range comps {
		wg.Go(func() { errs[i] = comp.Stop(stopGrace) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (c *Cluster) components() []*component { return slices.Concat(c.stages...) }

// component returns the running component of that name; Start has started
// them all before anyone asks.
func (c *Cluster) component(name string) *component {
	for _, comp := range c.components() {
		if comp.Name() == name {
			return comp
		}
	}
	panic("simcluster: no component " + name)
}
