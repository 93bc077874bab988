// Package appmetrics publishes http_requests_total{namespace,pod,code}, the
// request counter of an application, with per-pod traffic the test sets. A
// counter grows continuously at its rate, computed when scraped, so that
// rate() in Prometheus sees steady traffic rather than steps.
package appmetrics

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/extendeddaemonset/extendeddaemonset/test/exporters/internal/metricsserver"
)

var requestsDesc = prometheus.NewDesc("http_requests_total",
	"Total number of HTTP requests by status code.",
	[]string{"namespace", "pod", "code"}, nil)

// Options configures Start.
type Options struct {
	// Addr is the host:port to listen on; empty means a free loopback port.
	Addr string
}

// Exporter is a running /metrics endpoint. Its methods are safe for
// concurrent use.
type Exporter struct {
	server *metricsserver.Server
	now    func() time.Time

	mu     sync.Mutex
	series map[seriesKey]*counter
}

type seriesKey struct{ namespace, pod, code string }

// counter is worth base at since and grows by rate per second after it.
type counter struct {
	base, rate float64
	since      time.Time
}

func (c *counter) valueAt(t time.Time) float64 {
	return c.base + c.rate*max(t.Sub(c.since).Seconds(), 0)
}

// Start serves the counters, none at first.
func Start(opts Options) (*Exporter, error) { return start(opts, time.Now) }

func start(opts Options, now func() time.Time) (*Exporter, error) {
	e := &Exporter{now: now, series: map[seriesKey]*counter{}}
	server, err := metricsserver.Start(opts.Addr, (*collector)(e))
	if err != nil {
		return nil, fmt.Errorf("starting application metrics exporter: %w", err)
	}
	e.server = server
	return e, nil
}

// Addr is the host:port of the /metrics endpoint.
func (e *Exporter) Addr() string { return e.server.Addr() }

// Close stops serving. Safe to call more than once.
func (e *Exporter) Close() error { return e.server.Close() }

// SetRate makes the pod's counter for code grow by perSecond from now on,
// keeping what it has counted so far; 0 stops it. The series is published
// from the first call on. It panics on a negative or non-finite rate, as a
// counter cannot decrease.
func (e *Exporter) SetRate(namespace, pod, code string, perSecond float64) {
	mustCount("rate", perSecond)
	e.mu.Lock()
	defer e.mu.Unlock()
	c, now := e.counter(namespace, pod, code), e.now()
	c.base, c.rate, c.since = c.valueAt(now), perSecond, now
}

// Add counts n requests of the pod with code at once. It panics on a
// negative or non-finite n.
func (e *Exporter) Add(namespace, pod, code string, n float64) {
	mustCount("increment", n)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.counter(namespace, pod, code).base += n
}

// Value is what a scrape would publish now for the pod and code, 0 for a
// series never set.
func (e *Exporter) Value(namespace, pod, code string) float64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.series[seriesKey{namespace, pod, code}]
	if !ok {
		return 0
	}
	return c.valueAt(e.now())
}

// RemovePod stops publishing the pod's series, as when a pod is deleted.
func (e *Exporter) RemovePod(namespace, pod string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k := range e.series {
		if k.namespace == namespace && k.pod == pod {
			delete(e.series, k)
		}
	}
}

// counter returns the series, creating it at 0; the caller holds mu.
func (e *Exporter) counter(namespace, pod, code string) *counter {
	k := seriesKey{namespace, pod, code}
	c, ok := e.series[k]
	if !ok {
		c = &counter{since: e.now()}
		e.series[k] = c
	}
	return c
}

func mustCount(what string, v float64) {
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		panic(fmt.Sprintf("appmetrics: %s %v would not make a counter", what, v))
	}
}

// collector is the Exporter seen by the registry, which keeps Describe and
// Collect out of the Exporter's API.
type collector Exporter

func (c *collector) Describe(ch chan<- *prometheus.Desc) { ch <- requestsDesc }

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for k, s := range c.series {
		ch <- prometheus.MustNewConstMetric(requestsDesc, prometheus.CounterValue, s.valueAt(now), k.namespace, k.pod, k.code)
	}
}
