// Package bench measures the controller against the native DaemonSet
// controller on the same simulated cluster. Nothing here asserts speed: the
// benchmarks print figures for people to compare.
package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
)

// writeVerbs are the apiserver_request_total verbs that change state.
var writeVerbs = []string{"POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "CREATE", "UPDATE", "APPLY"}

// requestKey is one series of apiserver_request_total, less the code.
type requestKey struct{ verb, resource, subresource string }

// apiWrites are write request counts of the API server by verb and resource.
type apiWrites map[requestKey]float64

// scrapeWrites reads apiserver_request_total from the API server's /metrics.
func scrapeWrites(ctx context.Context, client kubernetes.Interface) (apiWrites, error) {
	raw, err := client.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("scraping API server metrics: %w", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(raw)))
	if err != nil {
		return nil, fmt.Errorf("parsing API server metrics: %w", err)
	}
	out := apiWrites{}
	fam, ok := families["apiserver_request_total"]
	if !ok {
		return nil, fmt.Errorf("API server metrics have no apiserver_request_total")
	}
	for _, m := range fam.GetMetric() {
		k := requestKey{verb: label(m, "verb"), resource: label(m, "resource"), subresource: label(m, "subresource")}
		if slices.Contains(writeVerbs, k.verb) {
			out[k] += m.GetCounter().GetValue()
		}
	}
	return out, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// since returns the writes made after base.
func (w apiWrites) since(base apiWrites) apiWrites {
	out := apiWrites{}
	for k, v := range w {
		if d := v - base[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// controllerWrites counts the writes a workload controller makes: pod
// creations and deletions, and writes to its own kinds and events. The
// scheduler's bindings and kwok's pod status updates are left out, since
// they are the same whoever creates the pods.
func (w apiWrites) controllerWrites(kinds ...string) (pods, own, events int) {
	for k, v := range w {
		switch {
		case k.resource == "pods" && k.subresource == "":
			pods += int(v)
		case slices.Contains(kinds, k.resource):
			own += int(v)
		case k.resource == "events":
			events += int(v)
		}
	}
	return pods, own, events
}
