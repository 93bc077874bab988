package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/simcluster"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/daemon"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/managerproc"
)

// environment is a simulated cluster with every controller compared
// running, each with the same client rate limit.
type environment struct {
	nodes      int
	qps, burst int
	cluster    *simcluster.Cluster
	manager    *managerproc.Manager
	audit      *auditLog
	client     client.Client
	kube       kubernetes.Interface
	// native is kube-controller-manager's DaemonSet controller, which runs
	// for the whole benchmark (doc.go says why); kruise, Kruise's manager,
	// runs when it is a peer.
	native, kruise *controller
	// peers are the controllers ours is compared with, in cfg.peers' order.
	peers []*controller
	ours  *controller
	// kruiseManager is Kruise's manager's process, when it runs.
	kruiseManager *daemon.Daemon
	// profiler, when profiles were asked for, takes our manager's, and
	// memory follows its resident set.
	profiler *profiler
	memory   *memoryWatcher
}

// The user agents of the controllers' clients: kube-controller-manager
// names each controller's client after it, and client-go's default starts
// with the binary's name.
var (
	nativeAgent = userAgent{prefix: "kube-controller-manager/", suffix: "/daemon-set-controller"}
	ourAgent    = userAgent{prefix: managerBinary + "/"}
)

// managerBinary is the name the manager is built under.
const managerBinary = "manager"

// startEnvironment starts a cluster of nodes in dir, kube-controller-manager
// running the DaemonSet controller, Kruise's manager when it is a peer, and
// the manager built at binary, all with the client rate limit limit. On
// error, what it returns holds what was started, for stop.
// benchKubeletWorkers is how many pod status updates the simulated kubelets
// make at once in the benchmark.
const benchKubeletWorkers = 32

func startEnvironment(ctx context.Context, dir, binary string, cfg config, limit rateLimit) (*environment, error) {
	nodes := cfg.nodes
	e := &environment{nodes: nodes, qps: limit.qps, burst: limit.burst}
	var err error
	if e.audit, err = newAuditLog(dir); err != nil {
		return e, err
	}
	limits := []string{"--kube-api-qps=" + strconv.Itoa(limit.qps), "--kube-api-burst=" + strconv.Itoa(limit.burst)}
	crds := []string{filepath.Join(testenv.RepoRoot(), "config", "crd", "bases")}
	if slices.Contains(cfg.peers, kruise) {
		crds = append(crds, filepath.Dir(filepath.Join(cfg.kruiseDir, kruiseCRD)))
	}
	e.cluster, err = simcluster.Start(ctx, simcluster.Options{
		Nodes:            nodes,
		CRDDirs:          crds,
		ExtraControllers: []string{"daemonset-controller"},
		// kwok starts a new pod at once; an image updated in place restarts
		// as quickly, so that both kinds of update are timed on the
		// controller's work, not on a simulated kubelet's.
		ImageUpdateDelay: time.Millisecond,
		// Kubelets update their pods each on its own node: kwok's four
		// workers for all the nodes bounded the in-place scenario (three
		// status updates a pod) at QPS 200, whatever the controller.
		KubeletWorkers: benchKubeletWorkers,
		ExtraArgs: map[string][]string{
			// The pods of a run are deleted at once between runs; one
			// worker deletes about 300 a second.
			"kube-apiserver": append(e.audit.apiServerArgs(), "--delete-collection-workers=8"),
			"kube-controller-manager": append(limits,
				"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics"),
		},
	})
	if err != nil {
		return e, err
	}
	admin := e.cluster.Config()
	if e.client, err = client.New(admin, client.Options{Scheme: testenv.Scheme()}); err != nil {
		return e, fmt.Errorf("creating client: %w", err)
	}
	if e.kube, err = kubernetes.NewForConfig(admin); err != nil {
		return e, fmt.Errorf("creating client: %w", err)
	}
	args := append(slices.Clone(limits), "--metrics-secure=false")
	if cfg.profileDir != "" {
		if e.profiler, err = newProfiler(cfg.profileDir, limit); err != nil {
			return e, err
		}
		args = append(args, "--pprof-bind-address="+strings.TrimPrefix(e.profiler.baseURL, "http://"))
	}
	// Leader election is off: a lease would add its renewals to the
	// manager's requests, and the native controller runs without one too.
	e.manager, err = managerproc.Start(ctx, managerproc.Options{
		Name: "manager", Binary: binary, Kubeconfig: e.cluster.KubeconfigPath(),
		LogPath: filepath.Join(dir, "manager.log"),
		Args:    args,
		Env:     cfg.managerEnv,
	})
	if err != nil {
		return e, err
	}
	controllerManagerURL, err := e.cluster.ControllerManagerURL()
	if err != nil {
		return e, err
	}
	e.native = &controller{
		name: native, pid: e.cluster.ControllerManagerPID,
		metricsURL:     controllerManagerURL + "/metrics",
		requestCounter: "rest_client_requests_total", keyOf: requestKeyByMethod,
		agent:       nativeAgent,
		ownKinds:    []string{"daemonsets", "controllerrevisions"},
		newWorkload: func(scenario) workload { return &daemonSet{c: e.client} },
	}
	e.ours = &controller{
		name: ours, pid: e.manager.PID,
		metricsURL:     "http://" + e.manager.MetricsAddress() + "/metrics",
		requestCounter: "extendeddaemonset_api_requests_total", keyOf: ourRequestKey,
		byResourceInProcess: true, agent: ourAgent,
		reconcilers: []string{"extendeddaemonset", "extendeddaemonsetreplicaset", decisionOnly},
		ownKinds:    []string{"extendeddaemonsets", "extendeddaemonsetreplicasets"},
		newWorkload: func(sc scenario) workload {
			if sc.workloadRef {
				return newReferencedDaemonSet(e.client)
			}
			return &extendedDaemonSet{c: e.client}
		},
	}
	if e.profiler != nil {
		if e.memory, err = watchMemory(e.manager.PID, e.ours.metricsURL, e.profiler); err != nil {
			return e, err
		}
	}
	if slices.Contains(cfg.peers, kruise) {
		if err := e.startKruise(ctx, dir, cfg, limit); err != nil {
			return e, err
		}
	}
	for _, name := range cfg.peers {
		e.peers = append(e.peers, map[string]*controller{native: e.native, kruise: e.kruise}[name])
	}
	return e, nil
}

// stop stops the managers and the cluster.
func (e *environment) stop() error {
	errs := []error{e.memory.close()}
	if e.manager != nil {
		errs = append(errs, e.manager.Stop())
	}
	if e.kruiseManager != nil {
		errs = append(errs, e.kruiseManager.Stop(kruiseStopGrace))
	}
	if e.cluster != nil {
		errs = append(errs, e.cluster.Stop())
	}
	return errors.Join(errs...)
}
