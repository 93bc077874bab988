package bench

import (
	"context"
	"crypto/tls"
	"net/http"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// ours is whom the figures are of besides the peers of config.go.
const ours = "ours"

// controller is one of the controllers compared, seen from outside
// its process: its pid, its metrics endpoint and its user agent.
type controller struct {
	name string
	pid  func() int
	// metricsURL serves the process's Prometheus metrics.
	metricsURL string
	// requestCounter is the process's counter of the requests it sent,
	// keyed by keyOf.
	requestCounter string
	keyOf          func(*dto.Metric) string
	// byResourceInProcess says the counter names resources; otherwise the
	// writes by resource come from the audit log.
	byResourceInProcess bool
	// agent picks its requests out of the audit log.
	agent userAgent
	// reconcilers are the controller-runtime controllers whose reconcile
	// times are reported; kube-controller-manager's has none.
	reconcilers []string
	// ownKinds are the resources it writes besides pods and events.
	ownKinds []string
	// newWorkload is the agent as this controller runs it in sc.
	newWorkload func(sc scenario) workload
}

// metricsClient scrapes the controllers' own endpoints:
// kube-controller-manager serves them with a certificate it generates.
var metricsClient = &http.Client{
	Timeout:   10 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // loopback test components
}

// processSnapshot is what a controller's process has counted so far.
type processSnapshot struct {
	requests  counts
	reconcile map[string]histogram
	cpu       float64
}

func (c *controller) snapshot(ctx context.Context) (processSnapshot, error) {
	families, err := scrapeFamilies(ctx, metricsClient, c.metricsURL)
	if err != nil {
		return processSnapshot{}, err
	}
	cpu, err := cpuSeconds(c.pid())
	if err != nil {
		return processSnapshot{}, err
	}
	reconcile := histograms(families, "controller_runtime_reconcile_time_seconds", "controller")
	if h, ok := histograms(families, decisionHistogram, "")[""]; ok {
		reconcile[decisionOnly] = h
	}
	return processSnapshot{
		requests:  sumCounter(families, c.requestCounter, c.keyOf),
		reconcile: reconcile,
		cpu:       cpu,
	}, nil
}

// Our manager times a replica set pass without its writes, which wait on
// the client's rate limit, in decisionHistogram; it is reported beside the
// reconcilers as decisionOnly.
const (
	decisionHistogram = "extendeddaemonset_replicaset_decision_seconds"
	decisionOnly      = "extendeddaemonsetreplicaset-decision"
)

// requestsSent is the total the process has counted, to tell when it has
// gone quiet.
func (c *controller) requestsSent(ctx context.Context) (float64, error) {
	families, err := scrapeFamilies(ctx, metricsClient, c.metricsURL)
	if err != nil {
		return 0, err
	}
	return sumCounter(families, c.requestCounter, c.keyOf).total(), nil
}

// Our manager counts its requests by verb and resource
// (controllers.ClientConfig).
func ourRequestKey(m *dto.Metric) string {
	return requestKey(label(m, "verb"), label(m, "resource"), label(m, "subresource"), label(m, "code"))
}

// kube-controller-manager counts them by HTTP method alone, its garbage
// collector's included, and so does Kruise's manager, all its controllers'
// and its webhook controller's included (client-go's
// rest_client_requests_total, which controller-runtime serves).
func requestKeyByMethod(m *dto.Metric) string {
	return requestKey(label(m, "method"), "", "", label(m, "code"))
}

// writeVerbs are the verbs, and HTTP methods, that change state.
var writeVerbs = map[string]bool{
	"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true,
	"POST": true, "PUT": true, "PATCH": true, "DELETE": true,
}

// writes counts the writes among requests.
func (c counts) writes() counts {
	out := counts{}
	for k, v := range c {
		if verb, _ := keyFields(k); writeVerbs[verb] {
			out[k] = v
		}
	}
	return out
}

// failed counts the requests that failed, error or refusal.
func (c counts) failed() counts {
	out := counts{}
	for k, v := range c {
		if strings.Contains(k, " code=") {
			out[k] = v
		}
	}
	return out
}
