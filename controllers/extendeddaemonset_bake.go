package controllers

import (
	"cmp"
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/extendeddaemonset/extendeddaemonset/analysis"
	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/bake"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/outcome"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// stepBake copies the domains of the active replica set's rollout into the
// status and, with a bake analysis, judges the bake of the domain that
// bakes: decide (bake.Step, a pure function), measure what is due, record
// the bake as passed once its analysis is Successful and its time is over
// (the active replica set's planner reads that), and record. It returns
// the measurements taken and when time alone changes the status.
func (r *ExtendedDaemonSetReconciler) stepBake(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet,
	sets []*v1alpha1.ExtendedDaemonSetReplicaSet, now time.Time,
) (map[string]v1alpha1.Measurement, time.Duration) {
	st := &eds.Status
	spec := bake.AnalysisOf(eds)
	active := byName(sets, st.ActiveReplicaSet)
	domains := rolloutDomains(active)
	in := bake.Input{Analysis: spec, ReplicaSet: st.ActiveReplicaSet, Domains: domains, Status: st.Bake,
		LastHandledRetry: st.LastHandledRetry, Now: now}
	if st.Canary == nil {
		// While a canary runs, its retries are its own.
		in.RetryToken = canary.RetryToken(eds.Spec.Strategy.Canary, eds.Annotations)
	}
	d := bake.Step(in)
	st.LastHandledRetry = d.LastHandledRetry
	var measured map[string]v1alpha1.Measurement
	var requeue time.Duration
	if d.Measure {
		b := d.Status
		b.Analysis, measured, requeue = r.measure(ctx, eds.Namespace, spec, b.Analysis, r.bakeTarget(ctx, eds),
			r.bakeNodeHealth(eds, b.Domain), b.StartedAt.Time, now)
		bakingSince := b.StartedAt.Time
		if i := slices.IndexFunc(domains, func(s v1alpha1.DomainStatus) bool { return s.Name == b.Domain }); i >= 0 && domains[i].BakingSince != nil {
			bakingSince = domains[i].BakingSince.Time
		}
		requeue = outcome.Soonest(requeue, bake.Settle(b, bakingSince, bakeTime(eds), now))
	}
	st.Bake = d.Status
	st.Domains = nil
	if active != nil {
		st.Domains = bake.Verdicts(active.Status.Domains, st.Bake)
	}
	_, untilMessage := bake.Message(st.Domains, st.Bake, bakeTime(eds), now)
	return measured, outcome.Soonest(requeue, untilMessage)
}

// bakeTarget observes what a bake's analysis measures (bakeTargetOf).
func (r *ExtendedDaemonSetReconciler) bakeTarget(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet) func() (analysis.Target, error) {
	return func() (analysis.Target, error) {
		pods, err := r.podsOf(ctx, eds)
		if err != nil {
			return analysis.Target{}, err
		}
		return bakeTargetOf(eds, pods), nil
	}
}

// bakeTargetOf is what a bake's analysis measures: the live pods of the
// active replica set, rolling out, and their nodes, against the live pods
// still on an older template, the baseline of a metric that has one, whose
// replica set is the older one most of them belong to.
func bakeTargetOf(eds *v1alpha1.ExtendedDaemonSet, pods []*corev1.Pod) analysis.Target {
	active := eds.Status.ActiveReplicaSet
	t := analysis.Target{Namespace: eds.Namespace, Name: eds.Name, CanaryReplicaSet: active}
	older := map[string]int{}
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if rs := pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel]; rs != active {
			t.StablePods = append(t.StablePods, pod.Name)
			older[rs]++
			continue
		}
		t.CanaryPods = append(t.CanaryPods, pod.Name)
		if node := placement.TargetNode(pod); node != "" {
			t.CanaryNodes = append(t.CanaryNodes, node)
		}
	}
	for rs, n := range older {
		if n > older[t.StableReplicaSet] || n == older[t.StableReplicaSet] && cmp.Less(rs, t.StableReplicaSet) {
			t.StableReplicaSet = rs
		}
	}
	slices.Sort(t.CanaryPods)
	slices.Sort(t.StablePods)
	slices.Sort(t.CanaryNodes)
	return t
}

// bakeTime is spec.strategy.rollingUpdate.topology.domainBakeTime, zero
// without one.
func bakeTime(eds *v1alpha1.ExtendedDaemonSet) time.Duration {
	if t := eds.Spec.Strategy.RollingUpdate.Topology; t != nil && t.DomainBakeTime != nil {
		return t.DomainBakeTime.Duration
	}
	return 0
}

// bakeJudging reports whether a bake's analysis may be measuring: its
// schedule lives in the status, which a reconcile must then read as last
// written.
func bakeJudging(eds *v1alpha1.ExtendedDaemonSet) bool {
	b := eds.Status.Bake
	return b != nil && !bake.Failed(b) && !bake.Passed(b, b.Domain)
}
