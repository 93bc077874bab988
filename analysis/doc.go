// Package analysis measures a canary with Prometheus queries and web
// requests, and judges it.
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
// Queriers keeps one Prometheus client, and so one pool of connections, per
// provider and credentials across reconciles.
package analysis
