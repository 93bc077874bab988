package controllers

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/extendeddaemonset/extendeddaemonset/analysis/web"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/outcome"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/store"
)

// ControllerName is the reporting controller of events and the manager's name.
const ControllerName = "extendeddaemonset-controller"

// Options tune the reconcilers; zero values mean the defaults.
type Options struct {
	// MaxConcurrentReconciles per kind.
	MaxConcurrentReconciles int
	// MaxConcurrentWrites bounds the pod creations and deletions one
	// reconcile has in flight.
	MaxConcurrentWrites int
	// UnresponsiveNodeGrace is how long a node may be not Ready before its
	// agent stops counting against maxUnavailable.
	UnresponsiveNodeGrace time.Duration
	// CounterWriteInterval is the least time between two status writes of
	// one object that change only counters (CounterWriteInterval of the
	// client's QPS); zero means a second.
	CounterWriteInterval time.Duration
	// WebHosts is the host policy of web metrics (and webhooks): the zero
	// value refuses loopback, link-local and the API server, whose address
	// Setup fills in from the manager's config when it is empty.
	WebHosts web.HostPolicy
	// EventsAddr, when set, is the address (http://host:port) of Flux's
	// notification-controller, which gets every event too.
	EventsAddr string
}

// Setup registers the indexes and reconcilers with a manager whose cache was
// built from CacheOptions.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if err := store.SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	cached, err := store.New(ctx, mgr.GetCache(), mgr.GetClient())
	if err != nil {
		return err
	}
	var recorder events.EventRecorder = mgr.GetEventRecorder(ControllerName)
	if opts.EventsAddr != "" {
		if recorder, err = withFluxEvents(mgr, recorder, opts.EventsAddr); err != nil {
			return err
		}
	}
	webHosts := opts.WebHosts
	if webHosts.APIServer == "" {
		webHosts.APIServer = mgr.GetConfig().Host
	}
	eds := &ExtendedDaemonSetReconciler{
		Client:                  mgr.GetClient(),
		APIReader:               mgr.GetAPIReader(),
		Recorder:                recorder,
		MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
		WebClient:               web.NewClient(webHosts),
		store:                   cached,
	}
	eds.statusWrites.Interval = opts.CounterWriteInterval
	if eds.Webhooks, err = newNotifier(mgr, eds.WebClient); err != nil {
		return err
	}
	if err := eds.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the ExtendedDaemonSet controller: %w", err)
	}
	ers := &ReplicaSetReconciler{
		Client:                  mgr.GetClient(),
		APIReader:               mgr.GetAPIReader(),
		Recorder:                recorder,
		MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
		MaxConcurrentWrites:     opts.MaxConcurrentWrites,
		UnresponsiveNodeGrace:   opts.UnresponsiveNodeGrace,
		store:                   cached,
	}
	ers.statusWrites.Interval = opts.CounterWriteInterval
	if err := ers.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the ExtendedDaemonSetReplicaSet controller: %w", err)
	}
	if err := (&SettingReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the ExtendedDaemonsetSetting controller: %w", err)
	}
	return nil
}

// FieldOwner names the controller in managed fields.
const FieldOwner = outcome.FieldOwner

// CacheOptions keeps the informer cache to what the controllers use, so
// that its memory stays flat on clusters of thousands of nodes.
func CacheOptions() cache.Options { return store.CacheOptions() }

// CounterWriteInterval is the least time between two status writes of one
// object that change only counters, for a client limited to qps requests a
// second: the counters of one rollout spend at most 1% of that budget.
func CounterWriteInterval(qps float32) time.Duration { return outcome.CounterWriteInterval(qps) }

// ClientOptions makes every write of the manager's client name FieldOwner,
// so that managed fields tell the controller's writes from a person's: the
// spec of an ExtendedDaemonSet must never be among them.
func ClientOptions() client.Options { return client.Options{FieldOwner: FieldOwner} }

// MetricsServerOptions serves the metrics on bindAddress ("0" disables
// them). Secure serving is HTTPS for callers the API server authenticates
// and authorizes to get /metrics (the eds-metrics-reader ClusterRole), so
// per-object series never leak to anyone who can reach the pod.
func MetricsServerOptions(bindAddress string, secure bool) metricsserver.Options {
	opts := metricsserver.Options{BindAddress: bindAddress, SecureServing: secure}
	if secure {
		opts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	return opts
}
