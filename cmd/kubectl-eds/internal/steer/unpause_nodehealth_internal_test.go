package steer

import (
	"testing"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// A canary paused by a node-health regression stays paused whatever the
// unpause annotation says (its analysis stays failed): unpause refuses and
// names the two ways out.
func TestUnpauseRefusesANodeHealthPause(t *testing.T) {
	g := gomega.NewWithT(t)
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns", Generation: 2}}
	eds.Status.ObservedGeneration = 2
	eds.Status.Canary = &v1alpha1.CanaryStatus{ReplicaSet: "agent-b", Paused: true,
		Reason: v1alpha1.ReasonNodeHealthRegressed, Message: "node-health: regressed; on node-1: Ready=False"}
	tgt := &target{key: types.NamespacedName{Namespace: "ns", Name: "agent"}, eds: eds}

	c, err := unpauseCanary(tgt)
	g.Expect(err).To(gomega.MatchError("canary agent-b of ExtendedDaemonSet ns/agent is paused by a node-health regression " +
		"(NodeHealthRegressed: node-health: regressed; on node-1: Ready=False), which unpausing cannot lift: its analysis stays failed; " +
		"`kubectl eds canary fail -n ns agent` sends its nodes back, `kubectl eds canary validate -n ns agent` promotes it anyway"))
	g.Expect(c.annotations).To(gomega.BeEmpty())
}
