// Command manager runs the ExtendedDaemonSet controllers.
package main

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/fluxcd/pkg/runtime/leaderelection"
	"github.com/fluxcd/pkg/runtime/logger"
	"github.com/fluxcd/pkg/runtime/probes"
	"github.com/go-logr/logr"
	flag "github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/extendeddaemonset/extendeddaemonset/analysis/web"
	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/internal/version"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/manager/memorylimit"
	"github.com/extendeddaemonset/extendeddaemonset/controllers"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

const controllerName = controllers.ControllerName

// The notification-controller's address, as Flux's own controllers take
// it: the flag, or the environment variable when the flag is not given.
const (
	eventsAddrFlag = "events-addr"
	eventsAddrEnv  = "EVENTS_ADDR"
)

const memoryLimitRatioFlag = "memory-limit-ratio"

// options are the command-line settings of the manager.
type options struct {
	version         bool
	metricsAddr     string
	secureMetrics   bool
	probeAddr       string
	pprofAddr       string
	leaseNamespace  string
	watchNamespaces []string
	webHosts        []string
	reconcilers     controllers.Options
	client          clientOptions
	leaderElection  leaderelection.Options
	logger          logger.Options

	// memoryLimitRatio is the part of the container's memory limit the Go
	// runtime is given as its soft limit.
	memoryLimitRatio float64
}

func (o *options) bindFlags(fs *flag.FlagSet) {
	fs.BoolVar(&o.version, "version", false,
		"Print the version, commit and build date, and exit.")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8443",
		"Address the metrics endpoint binds to; 0 disables it.")
	fs.BoolVar(&o.secureMetrics, "metrics-secure", true,
		"Serve metrics over HTTPS, allowing only callers the API server authorizes to get /metrics.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081",
		"Address the liveness (/healthz) and readiness (/readyz) probes bind to.")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "",
		"Address Go's profiles (/debug/pprof/) bind to; empty disables them. Only for a trusted network: they are served without authentication.")
	fs.StringVar(&o.leaseNamespace, "leader-election-namespace", "",
		"Namespace of the leader election lease; empty means the manager's own namespace when in a cluster.")
	fs.StringSliceVar(&o.watchNamespaces, "watch-namespaces", nil,
		"Namespaces whose ExtendedDaemonSets are reconciled (comma-separated); empty means all.")
	fs.StringSliceVar(&o.webHosts, web.AllowedHostsFlag, nil,
		"Hosts, IP addresses and CIDRs (comma-separated) that web metrics and webhooks may reach although they are loopback, link-local "+
			"(cloud metadata) or the API server's; every other host is allowed.")
	fs.Float64Var(&o.memoryLimitRatio, memoryLimitRatioFlag, memorylimit.DefaultRatio,
		"Part of the container's memory limit (cgroup) the Go runtime takes as its soft limit; the rest holds the binary's own pages, "+
			"which the runtime does not count. A GOMEMLIMIT in the environment wins; without a container limit none is set.")
	fs.IntVar(&o.reconcilers.MaxConcurrentReconciles, "concurrent", 4,
		"Reconciles run in parallel, per kind.")
	fs.IntVar(&o.reconcilers.MaxConcurrentWrites, "concurrent-pod-writes", 32,
		"Pod creations and deletions one reconcile has in flight.")
	fs.DurationVar(&o.reconcilers.UnresponsiveNodeGrace, "unresponsive-node-grace", placement.DefaultUnresponsiveGrace,
		"How long a node may be not Ready before its agent no longer counts against maxUnavailable.")
	fs.StringVar(&o.reconcilers.EventsAddr, eventsAddrFlag, "",
		"Address of Flux's notification-controller (http://host:port), which then gets every event the controller records, for Flux Alerts; unset reads "+eventsAddrEnv+", empty sends none.")
	o.client.BindFlags(fs)
	o.leaderElection.BindFlags(fs)
	o.logger.BindFlags(fs)
}

// newScheme holds the kinds the manager reads and writes through its client
// and cache: core (pods, nodes, secrets), apps (DaemonSets and their
// ControllerRevisions) and its own. Events, the leader election lease and
// the metrics endpoint's reviews go through client-go's typed clients, which
// bring their own scheme: every group of client-go registered here would be
// a second copy of that scheme, held for nothing.
func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(corev1.AddToScheme(scheme))
	utilruntime.Must(appsv1.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	return scheme
}

// managerOptions turns the command-line settings into controller-runtime's.
func (o *options) managerOptions() ctrl.Options {
	cacheOpts := controllers.CacheOptions()
	for _, ns := range o.watchNamespaces {
		if ns = strings.TrimSpace(ns); ns != "" {
			if cacheOpts.DefaultNamespaces == nil {
				cacheOpts.DefaultNamespaces = map[string]cache.Config{}
			}
			cacheOpts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return ctrl.Options{
		Scheme:                        newScheme(),
		Metrics:                       controllers.MetricsServerOptions(o.metricsAddr, o.secureMetrics),
		HealthProbeBindAddress:        o.probeAddr,
		PprofBindAddress:              o.pprofAddr,
		Cache:                         cacheOpts,
		Client:                        controllers.ClientOptions(),
		LeaderElection:                o.leaderElection.Enable,
		LeaderElectionID:              "extendeddaemonset.io",
		LeaderElectionNamespace:       o.leaseNamespace,
		LeaderElectionReleaseOnCancel: o.leaderElection.ReleaseOnCancel,
		LeaseDuration:                 &o.leaderElection.LeaseDuration,
		RenewDeadline:                 &o.leaderElection.RenewDeadline,
		RetryPeriod:                   &o.leaderElection.RetryPeriod,
	}
}

// restConfig is the kubeconfig in use with the client-side limits of the
// flags, always: the API server's priority and fairness protects it from
// all its clients, not one controller's rollout from starving the others
// on a busy control plane.
func (o *options) restConfig() *rest.Config {
	cfg := ctrl.GetConfigOrDie()
	cfg.QPS, cfg.Burst = o.client.QPS, o.client.Burst
	return cfg
}

// parseOptions reads the command line, and the environment (getenv) for
// what the command line leaves unset.
func parseOptions(args []string, getenv func(string) string) (options, error) {
	var opts options
	fs := flag.NewFlagSet(controllerName, flag.ContinueOnError)
	opts.bindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	if !fs.Changed(eventsAddrFlag) {
		opts.reconcilers.EventsAddr = getenv(eventsAddrEnv)
	}
	if err := checkEventsAddr(opts.reconcilers.EventsAddr); err != nil {
		return opts, err
	}
	if err := memorylimit.CheckRatio(opts.memoryLimitRatio); err != nil {
		return opts, fmt.Errorf("--%s: %w", memoryLimitRatioFlag, err)
	}
	return opts, nil
}

// checkEventsAddr refuses an address the notification-controller cannot be
// reached at, rather than failing every send later.
func checkEventsAddr(addr string) error {
	if addr == "" {
		return nil
	}
	u, err := url.Parse(addr)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return nil
	}
	return fmt.Errorf("--%s (or %s) %q: want the notification-controller's address as http://host:port", eventsAddrFlag, eventsAddrEnv, addr)
}

// run runs the manager with args; --version prints to stdout and returns
// before anything starts.
func run(args []string, stdout io.Writer) error {
	opts, err := parseOptions(args, os.Getenv)
	if err != nil {
		return err
	}
	build := version.Get()
	if opts.version {
		if _, err := fmt.Fprintln(stdout, controllerName, build); err != nil {
			return fmt.Errorf("printing the version: %w", err)
		}
		return nil
	}
	webHosts, err := web.ParseHostPolicy(opts.webHosts)
	if err != nil {
		return err
	}
	opts.reconcilers.WebHosts = webHosts
	logger.SetLogger(logger.NewLogger(opts.logger))
	log := ctrl.Log.WithName("setup")
	log.Info("build", "version", build.Version, "commit", build.Commit, "date", build.Date,
		"goVersion", build.GoVersion, "platform", build.Platform)
	setMemoryLimit(opts.memoryLimitRatio, log)

	mgr, err := ctrl.NewManager(controllers.ClientConfig(opts.restConfig()), opts.managerOptions())
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	probes.SetupChecks(mgr, log)
	ctx := ctrl.SetupSignalHandler()
	opts.reconcilers.CounterWriteInterval = controllers.CounterWriteInterval(opts.client.QPS)
	if err := controllers.Setup(ctx, mgr, opts.reconcilers); err != nil {
		return err
	}

	log.Info("starting manager", "watchNamespaces", opts.watchNamespaces, "eventsAddr", opts.reconcilers.EventsAddr)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running manager: %w", err)
	}
	return nil
}

// setMemoryLimit gives the Go runtime its soft limit before the caches
// fill, and logs the one in force. A container limit that cannot be read
// leaves the runtime without one, as outside a container: the manager
// still runs.
func setMemoryLimit(ratio float64, log logr.Logger) {
	limit, err := memorylimit.Set(ratio, memlimit.FromCgroup)
	if err != nil {
		log.Error(err, "no soft memory limit set")
	}
	switch limit.Source {
	case memorylimit.FromContainer:
		log.Info("soft memory limit", "source", limit.Source, "bytes", limit.Bytes, "containerBytes", limit.Container, "ratio", ratio)
	case memorylimit.FromEnvironment:
		log.Info("soft memory limit", "source", limit.Source, "bytes", limit.Bytes)
	default:
		log.Info("soft memory limit", "source", limit.Source)
	}
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
