package controllers

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// ClientConfig is cfg as the manager's clients use it: every request is
// counted in extendeddaemonset_api_requests_total, and all of them share
// one rate limiter of cfg's QPS and burst. client-go otherwise gives each
// resource's client a limiter of its own, so pod, status and event writes
// together could send several times the configured QPS, which is not what
// an operator setting --kube-api-qps on a busy API server asked for.
func ClientConfig(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	if out.RateLimiter == nil && out.QPS > 0 {
		out.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(out.QPS, out.Burst)
	}
	out.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return &countingTransport{next: next, requests: apiRequests()}
	})
	return out
}

// apiRequests counts the requests the manager sends by what they do, which
// client-go's own rest_client_requests_total (host and method only) cannot
// tell: a pod creation from a status patch, a list from a watch.
var apiRequests = sync.OnceValue(func() *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "extendeddaemonset_api_requests_total",
		Help: "Requests the controller sent to the API server, by verb, resource, subresource and response code.",
	}, []string{"verb", "resource", "subresource", "code"})
	ctrlmetrics.Registry.MustRegister(c)
	return c
})

// requestInfo parses request paths the way the API server does.
var requestInfo = &request.RequestInfoFactory{
	APIPrefixes:          sets.NewString("api", "apis"),
	GrouplessAPIPrefixes: sets.NewString("api"),
}

type countingTransport struct {
	next     http.RoundTripper
	requests *prometheus.CounterVec
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	code := "error"
	if err == nil {
		code = strconv.Itoa(resp.StatusCode)
	}
	verb, resource, subresource := describeRequest(req)
	t.requests.WithLabelValues(verb, resource, subresource, code).Inc()
	return resp, err
}

// describeRequest names a request by verb (get, list, watch, create,
// update, patch, delete), resource and subresource; requests outside the
// resource API (discovery, /version) are named by their method alone.
func describeRequest(req *http.Request) (verb, resource, subresource string) {
	info, err := requestInfo.NewRequestInfo(req)
	if err != nil || !info.IsResourceRequest {
		return req.Method, "", ""
	}
	return info.Verb, info.Resource, info.Subresource
}
