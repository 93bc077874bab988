package manifests

import (
	"context"
	"testing"

	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

// A new object, which no controller has looked at yet, must read as in
// progress to kstatus, so that Flux does not pass a first sync before the
// controller has even seen it. No controller runs in this suite.
func TestANewObjectIsInProgressForKstatus(t *testing.T) {
	testenv.RequireAssets(t)
	ctx := context.Background()
	for _, tc := range []struct{ name, manifest string }{
		{"ExtendedDaemonSet", `
apiVersion: extendeddaemonset.io/v1alpha1
kind: ExtendedDaemonSet
metadata: {name: fresh}
spec:
  template:
    spec:
      containers: [{name: agent, image: registry.k8s.io/pause:3.10}]
`},
		{"ExtendedDaemonSetReplicaSet", `
apiVersion: extendeddaemonset.io/v1alpha1
kind: ExtendedDaemonSetReplicaSet
metadata: {name: fresh}
spec:
  selector: {matchLabels: {app: fresh}}
  template:
    metadata: {labels: {app: fresh}}
    spec:
      containers: [{name: agent, image: registry.k8s.io/pause:3.10}]
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			obj := fromYAML(t, tc.manifest)
			if err := create(ctx, t, obj); err != nil {
				t.Fatal(err)
			}
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(obj.GroupVersionKind())
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "default", Name: "fresh"}, live)).To(gomega.Succeed())
			res, err := status.Compute(live)
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(res.Status).To(gomega.Equal(status.InProgressStatus), "%s: %s", res.Status, res.Message)
		})
	}
}
