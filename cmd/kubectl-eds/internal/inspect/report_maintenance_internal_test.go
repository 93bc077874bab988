package inspect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// The status names the nodes in maintenance the agent runs on, with why,
// up to ten of them; nodes the template does not fit, and nodes not in
// maintenance, are not named.
func TestReportNamesTheNodesInMaintenance(t *testing.T) {
	g := gomega.NewWithT(t)
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns"}}
	eds.Spec.Template.Spec.NodeSelector = map[string]string{"pool": "agents"}
	node := func(name, pool string, mutate func(*corev1.Node)) client.Object {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"pool": pool}}}
		if mutate != nil {
			mutate(n)
		}
		return n
	}
	cordon := func(n *corev1.Node) { n.Spec.Unschedulable = true }
	drain := func(n *corev1.Node) {
		n.Status.Conditions = []corev1.NodeCondition{{Type: "DrainInProgress", Status: corev1.ConditionTrue}}
	}
	objects := []client.Object{
		node("other-pool", "web", cordon),
		node("serving", "agents", nil),
		node("node-a-draining", "agents", drain),
	}
	for i := range 11 {
		objects = append(objects, node(fmt.Sprintf("node-b-%02d", i), "agents", cordon))
	}
	c := fake.NewClientBuilder().WithScheme(cli.Scheme()).WithObjects(objects...).Build()

	s := &snapshot{eds: eds, now: time.Now()}
	s.maintenance, s.maintenanceErr = nodesInMaintenance(context.Background(), forbiddenList(c), eds)
	g.Expect(s.maintenanceErr).NotTo(gomega.HaveOccurred())
	g.Expect(s.maintenance).To(gomega.BeEmpty(), "the status counts none: no node is read")
	var out bytes.Buffer
	g.Expect(writeReport(&out, s, false)).To(gomega.Succeed())
	g.Expect(out.String()).NotTo(gomega.ContainSubstring("Maintenance:"))

	eds.Status.NodesInMaintenance = 12
	s.maintenance, s.maintenanceErr = nodesInMaintenance(context.Background(), c, eds)
	g.Expect(s.maintenanceErr).NotTo(gomega.HaveOccurred())
	g.Expect(s.maintenance).To(gomega.HaveLen(12))
	out.Reset()
	g.Expect(writeReport(&out, s, false)).To(gomega.Succeed())
	g.Expect(out.String()).To(gomega.MatchRegexp(`Maintenance:\s+12 nodes left alone`))
	g.Expect(out.String()).To(gomega.MatchRegexp(`\n  node-a-draining\s+DrainInProgress\n  node-b-00\s+cordoned\n`))
	g.Expect(out.String()).To(gomega.ContainSubstring("node-b-08"))
	g.Expect(out.String()).NotTo(gomega.ContainSubstring("node-b-09"), "ten named")
	g.Expect(out.String()).To(gomega.ContainSubstring("  ... and 2 more\n"))
	g.Expect(out.String()).NotTo(gomega.Or(gomega.ContainSubstring("other-pool"), gomega.ContainSubstring("serving")))

	// Without the right to list nodes, the count stays, and says why the
	// names do not.
	s.maintenance, s.maintenanceErr = nodesInMaintenance(context.Background(), forbiddenList(c), eds)
	out.Reset()
	g.Expect(writeReport(&out, s, false)).To(gomega.Succeed())
	g.Expect(out.String()).To(gomega.MatchRegexp(`Maintenance:\s+12 nodes left alone`))
	g.Expect(out.String()).To(gomega.ContainSubstring("(cannot name them: listing nodes: nodes is forbidden)"))
}

// forbiddenList is c refusing to list anything, as for a user without
// the right.
func forbiddenList(c client.WithWatch) client.Client {
	return interceptor.NewClient(c, interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return errors.New("nodes is forbidden")
		},
	})
}
