package controllers

// Pure tests: run them with -short (TestMain starts envtest otherwise).

import (
	"testing"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
)

func notifiedReplicaSet(name, hash string) *v1alpha1.ExtendedDaemonSetReplicaSet {
	return &v1alpha1.ExtendedDaemonSetReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec:       v1alpha1.ExtendedDaemonSetReplicaSetSpec{TemplateGeneration: hash},
	}
}

// The metadata sent to Flux names the template's revision and, in the
// token, the transition's subject: distinct transitions differ, a
// transition told again does not.
func TestEventMetadataNamesTheTransition(t *testing.T) {
	g := gomega.NewWithT(t)
	rs := notifiedReplicaSet("agent-2", "5d8f")
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "agent"}}
	eds.Status.Canary = &v1alpha1.CanaryStatus{ReplicaSet: "agent-2", Instance: "k3x", Step: 2}

	g.Expect(eventMetadata(eds, rs, canary.Failed)).To(gomega.Equal(map[string]string{
		"extendeddaemonset.io/revision": "5d8f",
		"extendeddaemonset.io/token":    "CanaryFailed/replicaSet=agent-2/instance=k3x/step=2",
	}))
	// The same transition told again is the same event.
	g.Expect(eventMetadata(eds.DeepCopy(), rs.DeepCopy(), canary.Failed)).To(gomega.Equal(eventMetadata(eds, rs, canary.Failed)))

	// Another step, another canary instance, another reason: another
	// token.
	next := eds.DeepCopy()
	next.Status.Canary.Step = 3
	retried := eds.DeepCopy()
	retried.Status.Canary.Instance = "m9q"
	tokens := map[string]bool{}
	for _, md := range []map[string]string{
		eventMetadata(eds, rs, canary.Failed), eventMetadata(next, rs, canary.Failed),
		eventMetadata(retried, rs, canary.Failed), eventMetadata(eds, rs, v1alpha1.ReasonAnalysisFailed),
	} {
		tokens[md["extendeddaemonset.io/token"]] = true
	}
	g.Expect(tokens).To(gomega.HaveLen(4))

	// A replica set's own event names it; the canary of another replica
	// set does not count.
	g.Expect(eventMetadata(rs, nil, "FailedCreate")).To(gomega.Equal(map[string]string{
		"extendeddaemonset.io/revision": "5d8f",
		"extendeddaemonset.io/token":    "FailedCreate/replicaSet=agent-2",
	}))
	other := notifiedReplicaSet("agent-1", "77aa")
	g.Expect(eventMetadata(eds, other, "RolledOut")["extendeddaemonset.io/token"]).To(gomega.Equal("RolledOut/replicaSet=agent-1"))
}

// The domain baking is part of the token; a domain whose bake passed is
// not.
func TestEventMetadataNamesTheBakingDomain(t *testing.T) {
	g := gomega.NewWithT(t)
	rs := notifiedReplicaSet("agent-2", "5d8f")
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "agent"}}
	eds.Status.Bake = &v1alpha1.DomainBakeStatus{ReplicaSet: "agent-2", Domain: "zone-b", PassedThrough: "zone-a"}
	g.Expect(eventMetadata(eds, rs, v1alpha1.ReasonDomainBakeFailed)["extendeddaemonset.io/token"]).To(
		gomega.Equal("DomainBakeFailed/replicaSet=agent-2/domain=zone-b"))
	eds.Status.Bake.PassedThrough = "zone-b"
	g.Expect(eventMetadata(eds, rs, "RolledOut")["extendeddaemonset.io/token"]).To(gomega.Equal("RolledOut/replicaSet=agent-2"))
}

// An event about no replica set has a token and no revision.
func TestEventMetadataWithoutReplicaSet(t *testing.T) {
	g := gomega.NewWithT(t)
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "agent"}}
	g.Expect(eventMetadata(eds, nil, v1alpha1.ReasonInvalidSpec)).To(gomega.Equal(map[string]string{
		"extendeddaemonset.io/token": "InvalidSpec",
	}))
}
