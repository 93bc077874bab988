package controllers

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// replicaSetDecisionSeconds times what a replica set pass spends deciding:
// reading the cached nodes and pods and computing the plan. The reconcile
// time of controller-runtime also holds the pass's pod writes, which wait
// on the client's rate limit: at 5,000 nodes that wait, not the work,
// makes its tail.
var replicaSetDecisionSeconds = sync.OnceValue(func() prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "extendeddaemonset_replicaset_decision_seconds",
		Help:    "Time a replica set reconcile spends observing the cached nodes and pods and planning, without its API requests.",
		Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5},
	})
	ctrlmetrics.Registry.MustRegister(h)
	return h
})

// replicaSetViewMismatches counts the kept views the periodic check found
// unlike the cache: each is a change this controller missed, which the
// check repaired. It should stay at zero.
var replicaSetViewMismatches = sync.OnceValue(func() prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "extendeddaemonset_replicaset_view_mismatches_total",
		Help: "Replica set views kept from pass to pass that the periodic full check found unlike the cache, and stated afresh.",
	})
	ctrlmetrics.Registry.MustRegister(c)
	return c
})
