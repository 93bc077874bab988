package controllers

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/extendeddaemonset/extendeddaemonset/analysis"
	"github.com/extendeddaemonset/extendeddaemonset/analysis/web"
	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
)

// analysisMetrics are registered once per process: the controllers can be
// set up again in one process (tests restart them), a registry cannot take
// the same collectors twice.
var analysisMetrics = sync.OnceValue(func() *analysis.Metrics { return analysis.NewMetrics(ctrlmetrics.Registry) })

// analyze takes the measurements of the running canary that are due and
// returns its analysis so far, the measurements taken, and the wait until
// the next measurement. Measuring starts at readyAt, when every canary pod
// was first available.
func (r *ExtendedDaemonSetReconciler) analyze(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet, in canary.Input, stablePods []string,
	readyAt time.Time,
) (*v1alpha1.AnalysisStatus, map[string]v1alpha1.Measurement, time.Duration) {
	target := func() (analysis.Target, error) {
		return analysis.Target{
			Namespace: eds.Namespace, Name: eds.Name,
			CanaryReplicaSet: in.ReplicaSet, StableReplicaSet: eds.Status.ActiveReplicaSet,
			CanaryPods: podNamesOf(in.Pods), StablePods: stablePods, CanaryNodes: in.Status.Nodes,
		}, nil
	}
	nodes := r.canaryNodeHealth(eds, in.Status)
	return r.measure(ctx, eds.Namespace, in.Strategy.Analysis, in.Status.Analysis, target, nodes, readyAt, in.Now)
}

// measure takes the measurements of spec that are due, counting from
// startedAt, and returns the analysis st so far, the measurements taken,
// and the wait until the next measurement; target, observed only when a
// measurement is due, names what is measured, and nodes observes the nodes
// its nodeHealth metrics judge. A failure to reach
// Prometheus (a missing Secret, a bad CA) or to observe the target is a
// measurement error like any other: beyond consecutiveErrorLimit the
// analysis is in Error, and its status says why. The canary's analysis and
// the bakes' share it.
func (r *ExtendedDaemonSetReconciler) measure(ctx context.Context, namespace string, spec *v1alpha1.CanaryAnalysis, st *v1alpha1.AnalysisStatus,
	target func() (analysis.Target, error), nodes analysis.NodeObserver, startedAt, now time.Time,
) (*v1alpha1.AnalysisStatus, map[string]v1alpha1.Measurement, time.Duration) {
	due, next := analysis.Due(spec, st, startedAt, now)
	if len(due) == 0 {
		return st, nil, next
	}
	// Prometheus that cannot be configured fails the query and preset
	// metrics only: the web metrics are measured still.
	querier, querierErr := r.querier(ctx, namespace, spec.Provider.Prometheus)
	t, err := target()
	var out *v1alpha1.AnalysisStatus
	if err != nil {
		failed := map[string]v1alpha1.Measurement{}
		for _, name := range due {
			failed[name] = v1alpha1.Measurement{Phase: v1alpha1.AnalysisError, Message: err.Error(), Time: metav1.NewTime(now)}
		}
		out = analysis.Record(spec, st, failed)
		_, next = analysis.Due(spec, out, startedAt, now)
	} else {
		a := analysis.Analyzer{Querier: querier, QuerierError: querierErr, Web: r.webQuerier(namespace), Nodes: nodes}
		out, next = a.Step(ctx, spec, st, t, startedAt, now)
	}
	return out, newestOf(out, due), next
}

// querier returns the Prometheus client of an analysis, with the
// credentials of its Secret, from the reconciler's clients so that
// reconciles share connections. The Secret is read around the cache:
// caching every Secret of the cluster to read one now and then is not worth
// it. An analysis without Prometheus (only web metrics) has no client.
func (r *ExtendedDaemonSetReconciler) querier(ctx context.Context, namespace string, p *v1alpha1.PrometheusProvider) (analysis.Querier, error) {
	if p == nil {
		return nil, nil
	}
	var creds analysis.Credentials
	if p.SecretRef != nil {
		secret := &corev1.Secret{}
		key := types.NamespacedName{Namespace: namespace, Name: p.SecretRef.Name}
		if err := r.APIReader.Get(ctx, key, secret); err != nil {
			return nil, fmt.Errorf("reading the Prometheus credentials of Secret %s: %w", key, err)
		}
		c, err := analysis.CredentialsFromSecret(secret.Data)
		if err != nil {
			return nil, fmt.Errorf("credentials in Secret %s: %w", key, err)
		}
		creds = c
	}
	q, err := r.queriers.Get(*p, creds)
	if err != nil {
		return nil, fmt.Errorf("prometheus client for %s: %w", p.Address, err)
	}
	return q, nil
}

// webQuerier sends the requests of the web metrics of an analysis in
// namespace, reading the Secrets they name around the cache, as the
// Prometheus credentials are read.
func (r *ExtendedDaemonSetReconciler) webQuerier(namespace string) analysis.WebQuerier {
	if r.WebClient == nil {
		return nil
	}
	return analysis.NewWebQuerier(r.WebClient, func(ctx context.Context, spec *v1alpha1.WebRequest) (web.Request, error) {
		return web.Resolve(ctx, r.APIReader, namespace, spec)
	})
}

// newestOf is the newest measurement of each named metric.
func newestOf(st *v1alpha1.AnalysisStatus, names []string) map[string]v1alpha1.Measurement {
	out := map[string]v1alpha1.Measurement{}
	if st == nil {
		return out
	}
	for _, name := range names {
		for _, m := range st.Metrics {
			if m.Name == name && len(m.Measurements) > 0 {
				out[name] = m.Measurements[len(m.Measurements)-1]
			}
		}
	}
	return out
}

func podNamesOf(pods []*corev1.Pod) []string {
	names := make([]string, 0, len(pods))
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			names = append(names, p.Name)
		}
	}
	return names
}

// analysisReasons are the condition and event reasons of analysis phases.
var analysisReasons = map[v1alpha1.AnalysisPhase]string{
	"":                            v1alpha1.ReasonAnalysisPending,
	v1alpha1.AnalysisPending:      v1alpha1.ReasonAnalysisPending,
	v1alpha1.AnalysisRunning:      v1alpha1.ReasonAnalysisRunning,
	v1alpha1.AnalysisSuccessful:   v1alpha1.ReasonAnalysisSuccessful,
	v1alpha1.AnalysisFailed:       v1alpha1.ReasonAnalysisFailed,
	v1alpha1.AnalysisInconclusive: v1alpha1.ReasonAnalysisInconclusive,
	v1alpha1.AnalysisError:        v1alpha1.ReasonAnalysisError,
}
