package harness

import (
	"cmp"
	"context"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/extendeddaemonset/extendeddaemonset/controllers"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

// Controllers is the controller manager running in the test process.
type Controllers = testenv.Manager

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
	var o startOptions
	for _, apply := range options {
		apply(&o)
	}
	return testenv.StartManager(ctx, cfg, testenv.Wiring{
		Cache:   controllers.CacheOptions(),
		Client:  controllers.ClientOptions(),
		Metrics: controllers.MetricsServerOptions(cmp.Or(o.secureMetricsAddr, "0"), o.secureMetricsAddr != ""),
		Setup: func(ctx context.Context, mgr ctrl.Manager) error {
			return controllers.Setup(ctx, mgr, opts)
		},
	}, log)
}
