// Package analysis measures a canary with Prometheus queries and judges it.
//
// One reconcile of a canary under analysis calls Analyzer.Step: Due picks the
// metrics whose interval has elapsed, Measure renders each query for the
// canary pods (and, for a baseline comparison, the stable pods), queries
// Prometheus and judges the answer, and Record folds the measurements into
// the bounded AnalysisStatus kept on the ExtendedDaemonSet. Everything needed
// to resume lives in that status, so a restarted controller carries on where
// it stopped. The package knows nothing of controller-runtime: it works on
// the API types and a Querier.
package analysis
