package main

import (
	"context"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/test/exporters/appmetrics"
)

const (
	// errorRateEnv is the demo agent's setting that decides its share of
	// failed requests: a version's bug, shipped with its pod template.
	errorRateEnv = "ERROR_RATE"
	// requestsPerSecond is each agent pod's traffic.
	requestsPerSecond = 20
	// trafficInterval is how often the traffic follows the pods.
	trafficInterval = 500 * time.Millisecond
)

// agentTraffic gives every running pod of the demo namespace the request
// counters of an agent serving requestsPerSecond, of which the share set by
// its ERROR_RATE fails, so that Prometheus sees each version as good or as
// bad as its template says.
type agentTraffic struct {
	c         client.Reader
	namespace string
	app       *appmetrics.Exporter
}

// follow runs until ctx ends.
func (a *agentTraffic) follow(ctx context.Context) {
	ticker := time.NewTicker(trafficInterval)
	defer ticker.Stop()
	known := map[string]bool{}
	for {
		var pods corev1.PodList
		if err := a.c.List(ctx, &pods, client.InNamespace(a.namespace)); err == nil {
			known = a.apply(pods.Items, known)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// apply sets the rates of the running pods and drops the series of the
// pods gone, as their metrics endpoint would vanish with them; it returns
// the pods now published.
func (a *agentTraffic) apply(pods []corev1.Pod, known map[string]bool) map[string]bool {
	now := map[string]bool{}
	for i := range pods {
		pod := &pods[i]
		if pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil {
			continue
		}
		errorRate := errorRateOf(pod.Spec.Containers)
		a.app.SetRate(pod.Namespace, pod.Name, "200", requestsPerSecond*(1-errorRate))
		a.app.SetRate(pod.Namespace, pod.Name, "500", requestsPerSecond*errorRate)
		now[pod.Name] = true
	}
	for name := range known {
		if !now[name] {
			a.app.RemovePod(a.namespace, name)
		}
	}
	return now
}

// errorRateOf reads ERROR_RATE from the first of containers that sets it,
// as a share in [0, 1]; anything else counts as 0.
func errorRateOf(containers []corev1.Container) float64 {
	for _, c := range containers {
		for _, env := range c.Env {
			if env.Name != errorRateEnv {
				continue
			}
			rate, err := strconv.ParseFloat(env.Value, 64)
			if err != nil || !(rate >= 0 && rate <= 1) { // NaN too
				return 0
			}
			return rate
		}
	}
	return 0
}
