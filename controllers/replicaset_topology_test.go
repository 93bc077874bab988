package controllers

import (
	"fmt"
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

const zoneLabel = corev1.LabelTopologyZone

// A sequential zone rollout lists its domains in order, the nodes without
// the key last, and replaces the old pods of one zone at a time even when
// maxUnavailable would let it take every node at once.
func TestTopologyRollsOutZoneByZone(t *testing.T) {
	s := newScenario(t)
	nodes := []*corev1.Node{
		s.createNode("b", map[string]string{zoneLabel: "zone-b"}),
		s.createNode("a", map[string]string{zoneLabel: "zone-a"}),
		s.createNode("x", nil),
	}
	eds := s.newEDS("agent", imageV1)
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(3))
	eds.Spec.Strategy.RollingUpdate.Topology = &v1alpha1.RollingUpdateTopology{Key: zoneLabel}
	first, _ := s.createRolledOut(eds, nodes...)

	s.setImage(eds, imageV2)
	second := s.activeReplicaSet(eds.Name, first)
	var replaced []string
	for i, zone := range []string{"zone-a", "zone-b", rollout.NoDomain} {
		node := nodes[[]int{1, 0, 2}[i]].Name
		var old corev1.Pod
		s.g.Eventually(func(g gomega.Gomega) {
			terminating := terminatingPods(s.podsOf(g, first))
			g.Expect(terminating).To(gomega.HaveLen(1), "old pods deleted at once")
			old = terminating[0]
			g.Expect(placement.TargetNode(&old)).To(gomega.Equal(node), "the old pod deleted is not in %s", zone)
			domains := s.getERS(g, second).Status.Domains
			g.Expect(domains).To(gomega.HaveLen(3))
			for j, d := range domains {
				g.Expect(d.Name).To(gomega.Equal([]string{"zone-a", "zone-b", rollout.NoDomain}[j]))
				want := v1alpha1.DomainPending
				switch {
				case j < i:
					want = v1alpha1.DomainDone
				case j == i:
					want = v1alpha1.DomainUpdating
				}
				g.Expect(d.State).To(gomega.Equal(want), "domain %s", d.Name)
				g.Expect(d.Desired).To(gomega.Equal(int32(1)))
			}
		}).Should(gomega.Succeed())
		s.finishDeletion(&old)
		replaced = append(replaced, node)
		pod := s.waitForPods(second, replaced...)[node]
		s.runPod(&pod)
	}
	s.g.Eventually(func(g gomega.Gomega) {
		expectRolledOut(g, s.getEDS(g, eds.Name))
		for _, d := range s.getERS(g, second).Status.Domains {
			g.Expect(d.State).To(gomega.Equal(v1alpha1.DomainDone), "domain %s", d.Name)
		}
	}).Should(gomega.Succeed())
}

// The schema rejects a bake with parallel domains and a per-domain budget
// of zero, and defaults the order and the budget.
func TestTopologyValidation(t *testing.T) {
	s := newScenario(t)
	bake := s.newEDS("bake", imageV1)
	bake.Spec.Strategy.RollingUpdate.Topology = &v1alpha1.RollingUpdateTopology{
		Key: zoneLabel, Order: v1alpha1.TopologyParallel, DomainBakeTime: &metav1.Duration{Duration: 60e9},
	}
	s.g.Expect(k8s.Create(s.ctx, bake)).To(gomega.MatchError(gomega.ContainSubstring("domainBakeTime is only allowed with order Sequential")))
	zero := s.newEDS("zero", imageV1)
	zero.Spec.Strategy.RollingUpdate.Topology = &v1alpha1.RollingUpdateTopology{Key: zoneLabel, MaxUnavailablePerDomain: ptr.To(intstr.FromString("0%"))}
	s.g.Expect(k8s.Create(s.ctx, zero)).To(gomega.MatchError(gomega.ContainSubstring("maxUnavailablePerDomain must be an integer >= 1 or a percentage between 1% and 100%")))
	ok := s.newEDS("ok", imageV1)
	ok.Spec.Strategy.RollingUpdate.Topology = &v1alpha1.RollingUpdateTopology{Key: zoneLabel}
	s.g.Expect(k8s.Create(s.ctx, ok)).To(gomega.Succeed())
	s.g.Expect(ok.Spec.Strategy.RollingUpdate.Topology.Order).To(gomega.Equal(v1alpha1.TopologySequential))
	s.g.Expect(ok.Spec.Strategy.RollingUpdate.Topology.MaxUnavailablePerDomain).To(gomega.Equal(ptr.To(intstr.FromInt32(1))))
}

// status.domains stays within its bound, starting where the rollout is.
func TestDomainStatusesWindow(t *testing.T) {
	g := gomega.NewWithT(t)
	var domains []rollout.DomainCounts
	for i := range 40 {
		state := rollout.DomainDone
		if i >= 20 {
			state = rollout.DomainPending
		}
		domains = append(domains, rollout.DomainCounts{Name: fmt.Sprintf("z%02d", i), State: state})
	}
	out := domainStatuses(domains)
	g.Expect(out).To(gomega.HaveLen(v1alpha1.MaxStatusDomains))
	g.Expect(out[0].Name).To(gomega.Equal("z08"))
	g.Expect(domainStatuses(domains[:3])).To(gomega.HaveLen(3))
	g.Expect(domainStatuses(nil)).To(gomega.BeNil())
}
