package e2e

import (
	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/extendeddaemonset/extendeddaemonset/test/argocd"
)

// kstatusOf computes what Flux's health check reads from obj.
func kstatusOf(g gomega.Gomega, obj client.Object) *status.Result {
	res, err := status.Compute(unstructuredOf(g, obj))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return res
}

// argoHealthOf runs the shipped Argo CD health check on obj, as Argo CD
// does, and returns the health status with its message.
func argoHealthOf(g gomega.Gomega, obj client.Object) (string, string) {
	health, message, err := argocd.Health(unstructuredOf(g, obj))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return health, message
}

func unstructuredOf(g gomega.Gomega, obj client.Object) *unstructured.Unstructured {
	gvk, err := apiutil.GVKForObject(obj, env.Client.Scheme())
	g.Expect(err).NotTo(gomega.HaveOccurred())
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(gvk)
	return u
}
