package controllers

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func TestDescribeRequest(t *testing.T) {
	for _, tc := range []struct {
		method, url                 string
		verb, resource, subresource string
	}{
		{"GET", "/api/v1/namespaces/ns/pods", "list", "pods", ""},
		{"GET", "/api/v1/pods?watch=true", "watch", "pods", ""},
		{"GET", "/api/v1/namespaces/ns/pods/p", "get", "pods", ""},
		{"POST", "/api/v1/namespaces/ns/pods", "create", "pods", ""},
		{"DELETE", "/api/v1/namespaces/ns/pods/p", "delete", "pods", ""},
		{"PATCH", "/apis/extendeddaemonset.io/v1alpha1/namespaces/ns/extendeddaemonsets/agent/status", "patch", "extendeddaemonsets", "status"},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l", "update", "leases", ""},
		{"GET", "/api/v1/nodes", "list", "nodes", ""},
		{"GET", "/version", "GET", "", ""},
		{"GET", "/apis", "GET", "", ""},
	} {
		req := httptest.NewRequest(tc.method, tc.url, nil)
		verb, resource, subresource := describeRequest(req)
		g := gomega.NewWithT(t)
		g.Expect([]string{verb, resource, subresource}).To(gomega.Equal([]string{tc.verb, tc.resource, tc.subresource}), tc.method+" "+tc.url)
	}
}

// Every client made from the config shares one limiter, and counts what
// it sends, answered or not.
func TestClientConfigCountsAndSharesOneRateLimiter(t *testing.T) {
	g := gomega.NewWithT(t)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPatch {
			http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":409,"reason":"Conflict"}`, http.StatusConflict)
			return
		}
		_, _ = w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","items":[]}`))
	}))
	defer server.Close()

	cfg := ClientConfig(&rest.Config{Host: server.URL, QPS: 7, Burst: 3})
	g.Expect(cfg.RateLimiter).NotTo(gomega.BeNil())
	g.Expect(cfg.RateLimiter.QPS()).To(gomega.BeNumerically("==", 7))
	kube, err := kubernetes.NewForConfig(cfg)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(kube.CoreV1().RESTClient().GetRateLimiter()).To(gomega.BeIdenticalTo(kube.AppsV1().RESTClient().GetRateLimiter()))
	g.Expect(kube.CoreV1().RESTClient().GetRateLimiter()).To(gomega.BeIdenticalTo(cfg.RateLimiter))

	lists := apiRequests().WithLabelValues("list", "pods", "", "200")
	patches := apiRequests().WithLabelValues("patch", "pods", "status", "409")
	listsBefore, patchesBefore := testutil.ToFloat64(lists), testutil.ToFloat64(patches)
	for range 3 {
		_, err := kube.CoreV1().Pods("ns").List(t.Context(), metav1.ListOptions{})
		g.Expect(err).NotTo(gomega.HaveOccurred())
	}
	_, err = kube.CoreV1().Pods("ns").Patch(t.Context(), "p", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{}, "status")
	g.Expect(err).To(gomega.HaveOccurred())
	g.Expect(testutil.ToFloat64(lists) - listsBefore).To(gomega.BeNumerically("==", 3))
	g.Expect(testutil.ToFloat64(patches) - patchesBefore).To(gomega.BeNumerically("==", 1))

	// A config without a QPS keeps client-go's own choice.
	g.Expect(ClientConfig(&rest.Config{Host: server.URL}).RateLimiter).To(gomega.BeNil())
}
