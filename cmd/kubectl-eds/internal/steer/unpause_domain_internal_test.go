package steer

import (
	"testing"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// Without a canary, unpause passes the gates before a domain that paused
// the rolling update, naming the replica set and the domain; a gate that
// failed it, or one that only waits, is not a pause to end.
func TestUnpausePassesAPausedDomainGate(t *testing.T) {
	g := gomega.NewWithT(t)
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns", Generation: 2}}
	eds.Status.ObservedGeneration = 2
	eds.Status.ActiveReplicaSet = "agent-b"
	eds.Status.Reason = v1alpha1.ReasonCanaryPaused
	eds.Status.DomainGate = &v1alpha1.DomainGateStatus{ReplicaSet: "agent-b", Domain: "zone-b"}
	tgt := &target{key: types.NamespacedName{Namespace: "ns", Name: "agent"}, eds: eds}

	c, err := unpauseCanary(tgt)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(c.annotations).To(gomega.HaveKeyWithValue(v1alpha1.CanaryUnpausedAnnotation, gomega.HaveValue(gomega.Equal("agent-b@zone-b"))))
	g.Expect(c.message).To(gomega.Equal("gates before domain zone-b of ExtendedDaemonSet ns/agent passed: the rolling update goes on"))

	eds.Status.Reason = v1alpha1.ReasonGateTimedOut
	_, err = unpauseCanary(tgt)
	g.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("nothing to unpause")), "a gate that failed the rollout")

	eds.Status.Reason = v1alpha1.ReasonWaitingForGate
	_, err = unpauseCanary(tgt)
	g.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("nothing to unpause")), "a gate that only waits")
}
