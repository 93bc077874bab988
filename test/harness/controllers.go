package harness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers"
)

// Scheme holds the core kinds and the extendeddaemonset.io kinds.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	return s
}

var setLoggerOnce sync.Once

// Controllers is the controller manager running in the test process.
type Controllers struct {
	Manager ctrl.Manager
	cancel  context.CancelFunc
	done    chan error
}

// Option changes how StartControllers runs the controllers.
type Option func(*startOptions)

type startOptions struct {
	secureMetricsAddr string
}

// WithSecureMetrics serves the metrics on addr as cmd/manager does by
// default: HTTPS, for callers the API server authorizes to get /metrics.
func WithSecureMetrics(addr string) Option {
	return func(o *startOptions) { o.secureMetricsAddr = addr }
}

// StartControllers runs the real reconcilers against cfg, as cmd/manager
// wires them (cache options included), with no probe listener and no
// metrics listener unless WithSecureMetrics asks for one,
// and returns once the cache has synced. They log to log; a zero logger
// discards. The first call also makes log controller-runtime's global logger.
func StartControllers(ctx context.Context, cfg *rest.Config, opts controllers.Options, log logr.Logger, options ...Option) (*Controllers, error) {
	if log.GetSink() == nil {
		log = logr.Discard()
	}
	var o startOptions
	for _, apply := range options {
		apply(&o)
	}
	setLoggerOnce.Do(func() { ctrl.SetLogger(log) })
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Logger:                 log,
		Scheme:                 Scheme(),
		Cache:                  controllers.CacheOptions(),
		Metrics:                controllers.MetricsServerOptions(cmp.Or(o.secureMetricsAddr, "0"), o.secureMetricsAddr != ""),
		HealthProbeBindAddress: "0",
		// Tests start several managers in one process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if err := controllers.Setup(runCtx, mgr, opts); err != nil {
		cancel()
		return nil, err
	}
	c := &Controllers{Manager: mgr, cancel: cancel, done: make(chan error, 1)}
	go func() { c.done <- mgr.Start(runCtx) }()
	syncCtx, stop := context.WithTimeout(ctx, 2*time.Minute)
	defer stop()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		return nil, errors.Join(errors.New("controller cache did not sync"), c.Stop())
	}
	return c, nil
}

// Stop stops the manager and waits for it.
func (c *Controllers) Stop() error {
	c.cancel()
	return <-c.done
}
