// Package analysis measures a canary with Prometheus queries, web requests
// and the health of its nodes, and judges it.
//
// One reconcile of a canary under analysis calls Analyzer.Step: Due picks the
// metrics whose interval has elapsed, Measure renders each query for the
// canary pods (and, for a baseline comparison, the stable pods), queries
// Prometheus and judges the answer, and Record folds the measurements into
// the bounded AnalysisStatus kept on the ExtendedDaemonSet. Everything needed
// to resume lives in that status, so a restarted controller carries on where
// it stopped. The package knows nothing of controller-runtime: it works on
// the API types and a Querier.
//
// Whoever may create an ExtendedDaemonSet writes the queries, so the work one
// costs the controller is bounded:
//
//   - a query template may only look up the documented fields and write
//     string constants (Render), and renders to at most MaxRenderedQuery
//     bytes;
//   - a query waits at most the provider's timeout, never more than
//     MaxTimeout, and Prometheus is told the same timeout;
//   - a whole Step, every due metric included, takes at most
//     MaxStepDuration;
//   - the window of a measurement, .Window, is the time since measuring
//     started (the controller starts once every canary pod is available)
//     but at most MaxWindow (or one interval, when that is longer): older
//     samples were judged by earlier measurements.
//
// A mistake in the spec that no measurement can get past, such as a template
// that does more than look up fields, is a *SpecError: CheckMetrics finds it
// before any query, and Record puts the metric in phase Error at once rather
// than after consecutiveErrorLimit measurements.
//
// A web metric asks an endpoint of the user's instead (MeasureWeb, through
// a WebQuerier built on package web, which bounds what such a request may
// reach and cost): the number at its jsonPath in the JSON answer is judged
// by its thresholdRange. An answer that is not 2xx, not JSON or without a
// number there is a measurement error whose message is a fixed text: the
// answer itself never reaches the status.
//
// A nodeHealth metric judges what the new version did to its nodes, with
// no Prometheus (MeasureNodeHealth, from what the Analyzer's NodeObserver
// saw, once per Step for all such metrics). Nothing is kept between
// measurements: each judged node is compared with itself before the change
// through transition times, and with same-zone baseline nodes that did not
// change over the same time; a time that is not known (zero) cannot tell
// before from after and blames nothing.
//
//   - A node turned unhealthy when a bad condition (Ready not True;
//     NetworkUnavailable, MemoryPressure, DiskPressure, PIDPressure or a
//     type the metric lists True) last changed at or after the change.
//     More such judged nodes than the baseline's fraction of nodes turned
//     bad, times the judged count, plus maxUnhealthyNodes (default 0), is
//     a regression.
//   - Of the other workloads' pods, a pod not ready before the change is
//     not counted, nor are Succeeded and terminating pods; one whose Ready
//     condition turned False, that restarted, or that failed since the
//     change is not ready; one created after the change counts once
//     NewPodGrace has passed. Their readiness on the judged nodes more than
//     maxPodReadinessDrop points (default 10) below the baseline's (100
//     with no baseline pod) is a regression. With no counted pod on the
//     judged nodes, readiness is not judged; conditions still are.
//   - No judged node at all (gone, in maintenance) is Inconclusive: an
//     analysis never passes on missing data.
//
// A regression is a Failed measurement naming the nodes and a few pods,
// with the evidence of the worst five nodes in Measurement.Nodes. A canary
// whose analysis failed only through nodeHealth metrics with onRegression
// Pause waits for a person instead of failing (PausesOnRegression).
//
// Queriers keeps one Prometheus client, and so one pool of connections, per
// provider and credentials across reconciles.
package analysis
