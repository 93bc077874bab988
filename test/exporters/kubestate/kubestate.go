// Package kubestate publishes pod metrics named, labelled and typed as
// kube-state-metrics publishes them, read from the real pod statuses of a
// cluster, so that queries written for a production Prometheus run unchanged
// against the test harness.
package kubestate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/test/exporters/internal/metricsserver"
)

// listTimeout bounds the pod list of one scrape; Prometheus gives up on the
// scrape sooner anyway.
const listTimeout = 10 * time.Second

var (
	restartsDesc = prometheus.NewDesc("kube_pod_container_status_restarts_total",
		"The number of container restarts per container.",
		[]string{"namespace", "pod", "uid", "container"}, nil)
	readyDesc = prometheus.NewDesc("kube_pod_status_ready",
		"Describes whether the pod is ready to serve requests.",
		[]string{"namespace", "pod", "uid", "condition"}, nil)
)

// Options configures Start.
type Options struct {
	// Addr is the host:port to listen on; empty means a free loopback port.
	Addr string
	// Namespace limits the pods published to one namespace; empty means all.
	Namespace string
	// Selector limits the pods published to those it matches; nil means all,
	// which on a shared cluster is rarely what a test wants.
	Selector labels.Selector
}

// Exporter is a running /metrics endpoint.
type Exporter struct {
	server *metricsserver.Server
}

// Start serves the metrics of the pods Options selects, listing them through
// reader at every scrape so that a scrape always sees the current statuses.
// A failed list fails the scrape.
func Start(reader client.Reader, opts Options) (*Exporter, error) {
	server, err := metricsserver.Start(opts.Addr, &collector{reader: reader, opts: opts})
	if err != nil {
		return nil, fmt.Errorf("starting kube-state exporter: %w", err)
	}
	return &Exporter{server: server}, nil
}

// Addr is the host:port of the /metrics endpoint.
func (e *Exporter) Addr() string { return e.server.Addr() }

// Close stops serving. Safe to call more than once.
func (e *Exporter) Close() error { return e.server.Close() }

type collector struct {
	reader client.Reader
	opts   Options
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- restartsDesc
	ch <- readyDesc
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	var list corev1.PodList
	listOpts := []client.ListOption{client.InNamespace(c.opts.Namespace)}
	if c.opts.Selector != nil {
		listOpts = append(listOpts, client.MatchingLabelsSelector{Selector: c.opts.Selector})
	}
	if err := c.reader.List(ctx, &list, listOpts...); err != nil {
		ch <- prometheus.NewInvalidMetric(restartsDesc, fmt.Errorf("listing pods: %w", err))
		return
	}
	for i := range list.Items {
		collectPod(ch, &list.Items[i])
	}
}

func collectPod(ch chan<- prometheus.Metric, pod *corev1.Pod) {
	ns, name, uid := pod.Namespace, pod.Name, string(pod.UID)
	for _, cs := range pod.Status.ContainerStatuses {
		ch <- prometheus.MustNewConstMetric(restartsDesc, prometheus.CounterValue,
			float64(cs.RestartCount), ns, name, uid, cs.Name)
	}
	// One series per possible status, 1 on the current one, as
	// kube-state-metrics does; a pod without a Ready condition has none.
	for _, cond := range pod.Status.Conditions {
		if cond.Type != corev1.PodReady {
			continue
		}
		for _, status := range []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown} {
			ch <- prometheus.MustNewConstMetric(readyDesc, prometheus.GaugeValue,
				boolValue(cond.Status == status), ns, name, uid, strings.ToLower(string(status)))
		}
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
