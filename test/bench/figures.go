package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"
)

// run is one measurement: one scenario, one controller, one repetition.
type run struct {
	Scenario   string `json:"scenario"`
	Controller string `json:"controller"`
	Rep        int    `json:"rep"`
	// NotAvailable says why the scenario could not be measured; the run
	// then has no figures.
	NotAvailable string `json:"notAvailable,omitempty"`
	// RequestsInProcess are the requests the controller's process counted:
	// by verb and resource for ours, by HTTP method for
	// kube-controller-manager, whose garbage collector is counted too.
	RequestsInProcess counts `json:"requestsInProcess,omitempty"`
	// RequestsAtAPIServer are the requests of the controller's user agent
	// in the API server's audit log, by verb and resource.
	RequestsAtAPIServer counts `json:"requestsAtAPIServer,omitempty"`
	// Figures are the run's figures by name (see figureRows).
	Figures map[string]float64 `json:"figures,omitempty"`
	// OverRateLimit says how the controller sent more than its client rate
	// limit allows.
	OverRateLimit string `json:"overRateLimit,omitempty"`
}

// measurementStart is what a measurement subtracts at its end.
type measurementStart struct {
	process     processSnapshot
	auditOffset int64
}

// startMeasurement snapshots c's counters and resets its peak RSS.
func (e *environment) startMeasurement(ctx context.Context, c *controller) (measurementStart, error) {
	if err := resetPeakRSS(c.pid()); err != nil {
		return measurementStart{}, err
	}
	process, err := c.snapshot(ctx)
	if err != nil {
		return measurementStart{}, err
	}
	offset, err := e.audit.offset()
	if err != nil {
		return measurementStart{}, err
	}
	return measurementStart{process: process, auditOffset: offset}, nil
}

// endMeasurement turns what c did since start, running sc, into a run's
// figures.
func (e *environment) endMeasurement(ctx context.Context, sc scenario, c *controller, start measurementStart, wall time.Duration) (*run, error) {
	end, err := c.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	peakRSS, err := peakRSSBytes(c.pid())
	if err != nil {
		return nil, err
	}
	r := &run{RequestsInProcess: end.requests.since(start.process.requests)}
	if r.RequestsInProcess.total() == 0 {
		return nil, fmt.Errorf("%s: %s counted no request during the rollout", c.name, c.requestCounter)
	}
	audited, err := e.audit.requestsSince(start.auditOffset, c.agent)
	if err != nil {
		return nil, err
	}
	r.RequestsAtAPIServer = audited.byKind
	if r.RequestsAtAPIServer.total() == 0 {
		return nil, fmt.Errorf("%s: no request of user agent %s in the audit log", c.name, c.agent)
	}
	byResource := r.RequestsAtAPIServer
	if c.byResourceInProcess {
		byResource = r.RequestsInProcess
	}
	writes := r.RequestsInProcess.writes().total()
	pods, own, events := writesByKind(byResource, c.ownKinds)
	nodes := float64(e.nodes)
	floor := writes / float64(e.qps)
	r.Figures = map[string]float64{
		figWall:      wall.Seconds(),
		figRequests:  r.RequestsInProcess.total(),
		figAudited:   r.RequestsAtAPIServer.total(),
		figWrites:    writes,
		figFailed:    r.RequestsInProcess.failed().total(),
		figPodWrites: pods / nodes,
		figOwnWrites: own / nodes,
		figEvtWrites: events / nodes,
		figQPSFloor:  floor,
		figPeakRate:  audited.peakRate(rateWindow),
		figPeakRSS:   peakRSS / (1 << 20),
		figCPU:       end.cpu - start.process.cpu,
	}
	if floor > 0 {
		r.Figures[figOverFloor] = wall.Seconds() / floor
	}
	if sc.workloadRef {
		if err := e.addDaemonSetControllerFigures(r, c, start); err != nil {
			return nil, err
		}
	}
	// The API server's receive times bunch up a little behind a slow
	// connection: only a clear excess is told.
	if peak, allowed := r.Figures[figPeakRate], e.allowedRate(); peak > 1.1*allowed {
		r.OverRateLimit = fmt.Sprintf("%.1f requests/s over %s, above the %.1f/s that QPS %d and burst %d allow",
			peak, rateWindow, allowed, e.qps, e.burst)
	}
	for _, name := range c.reconcilers {
		h := end.reconcile[name].since(start.process.reconcile[name])
		for _, q := range reconcileQuantiles {
			// No reconcile, no quantile: JSON has no NaN.
			if v := h.quantile(q); !math.IsNaN(v) {
				r.Figures[reconcileFigure(name, q)] = v * 1000
			}
		}
	}
	return r, nil
}

// addDaemonSetControllerFigures adds to r what the API server received
// from c and the DaemonSet controller together: in a workloadRef
// scenario, our side's pods are recreated by the DaemonSet controller,
// whose requests c's own figures leave out. On the native side, c is the
// DaemonSet controller, and the figures are its own.
func (e *environment) addDaemonSetControllerFigures(r *run, c *controller, start measurementStart) error {
	requests := r.RequestsAtAPIServer
	if c != e.native {
		daemonSetController, err := e.audit.requestsSince(start.auditOffset, e.native.agent)
		if err != nil {
			return err
		}
		requests = requests.plus(daemonSetController.byKind)
	}
	r.Figures[figWithDSRequests] = requests.total()
	r.Figures[figWithDSWrites] = requests.writes().total()
	return nil
}

// rateWindow is the window of the peak request rate. Over it, a client
// rate limiter allows QPS plus its burst spread over the window.
const rateWindow = 10 * time.Second

// allowedRate is the highest peak rate the rate limit allows.
func (e *environment) allowedRate() float64 {
	return float64(e.qps) + float64(e.burst)/rateWindow.Seconds()
}

// writesByKind adds up the writes to pods, to the controller's own kinds,
// and to events, core or events.k8s.io.
func writesByKind(requests counts, ownKinds []string) (pods, own, events float64) {
	for k, v := range requests.writes() {
		switch _, res := keyFields(k); {
		case res == "pods":
			pods += v
		case slices.Contains(ownKinds, res):
			own += v
		case res == "events":
			events += v
		}
	}
	return pods, own, events
}

// Figure names, in the JSON and in figureRows.
const (
	figWall      = "wallSeconds"
	figRequests  = "requests"
	figAudited   = "requestsAtAPIServer"
	figWrites    = "writes"
	figFailed    = "failedRequests"
	figPodWrites = "podWritesPerNode"
	figOwnWrites = "ownKindWritesPerNode"
	figEvtWrites = "eventWritesPerNode"
	figQPSFloor  = "qpsFloorSeconds"
	figPeakRate  = "peakRequestsPerSecond"
	figOverFloor = "wallOverQPSFloor"
	figPeakRSS   = "peakRSSMiB"
	figCPU       = "cpuSeconds"
	// Only in workloadRef scenarios.
	figWithDSRequests = "requestsWithDaemonSetController"
	figWithDSWrites   = "writesWithDaemonSetController"
)

// reconcileQuantiles are the reconcile times reported.
var reconcileQuantiles = []float64{0.5, 0.99}

func reconcileFigure(controller string, q float64) string {
	return fmt.Sprintf("reconcileP%gMillis/%s", q*100, controller)
}

// median is the median of values, which are not empty.
func median(values []float64) float64 {
	xs := slices.Sorted(slices.Values(values))
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}
