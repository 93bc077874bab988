package testenv

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Wiring is what the controllers package gives a manager, as cmd/manager
// passes it: the cache, client and metrics options, and the registration
// of the indexes and reconcilers.
type Wiring struct {
	Cache   cache.Options
	Client  client.Options
	Metrics metricsserver.Options
	Setup   func(context.Context, ctrl.Manager) error
}

var setLoggerOnce sync.Once

// Manager is a controller manager running in the test process.
type Manager struct {
	ctrl.Manager
	cancel context.CancelFunc
	done   chan error
}

// StartManager runs a manager against cfg with the given wiring and no
// probe listener, and returns once its cache has synced. It logs to log; a
// zero logger discards. The first call also makes log controller-runtime's
// global logger.
func StartManager(ctx context.Context, cfg *rest.Config, w Wiring, log logr.Logger) (*Manager, error) {
	if log.GetSink() == nil {
		log = logr.Discard()
	}
	setLoggerOnce.Do(func() { ctrl.SetLogger(log) })
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Logger:                 log,
		Scheme:                 Scheme(),
		Cache:                  w.Cache,
		Client:                 w.Client,
		Metrics:                w.Metrics,
		HealthProbeBindAddress: "0",
		// Tests start several managers in one process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	// The manager outlives ctx, which only bounds the start: Stop ends it.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if err := w.Setup(runCtx, mgr); err != nil {
		cancel()
		return nil, err
	}
	m := &Manager{Manager: mgr, cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- mgr.Start(runCtx) }()
	syncCtx, stop := context.WithTimeout(ctx, 2*time.Minute)
	defer stop()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		return nil, errors.Join(errors.New("controller cache did not sync"), m.Stop())
	}
	return m, nil
}

// Stop stops the manager and waits for it.
func (m *Manager) Stop() error {
	m.cancel()
	return <-m.done
}
