package clitest

import (
	"fmt"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/envkubelet"
)

const (
	eventually = 60 * time.Second
	polling    = 100 * time.Millisecond
)

// ScenarioLabel marks the nodes of a scenario; its ExtendedDaemonSets
// select them, so that tests sharing the API server do not share nodes.
const ScenarioLabel = "clitest.extendeddaemonset.io/scenario"

// Nodes creates n Ready nodes of the scenario, named <namespace>-<i>, and
// returns their names.
func (s *Scenario) Nodes(n int) []string {
	s.T.Helper()
	var names []string
	for i := range n {
		name := fmt.Sprintf("%s-%d", s.Namespace, i)
		node, err := envkubelet.CreateNode(s.Ctx, s.Client, name, map[string]string{ScenarioLabel: s.Namespace, corev1.LabelHostname: name})
		s.G.Expect(err).NotTo(gomega.HaveOccurred())
		names = append(names, node.Name)
		s.T.Cleanup(func() { _ = s.Client.Delete(s.Ctx, node) })
	}
	return names
}

// NewExtendedDaemonSet is an ExtendedDaemonSet of one container with image
// on the scenario's nodes, rolling one node at a time, with no canary.
func (s *Scenario) NewExtendedDaemonSet(name, image string) *v1alpha1.ExtendedDaemonSet {
	labels := map[string]string{"app": name}
	maxUnavailable := intstr.FromInt32(1)
	return &v1alpha1.ExtendedDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Namespace},
		Spec: v1alpha1.ExtendedDaemonSetSpec{
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{ScenarioLabel: s.Namespace},
					Containers:   []corev1.Container{{Name: "agent", Image: image}},
				},
			},
			Strategy: v1alpha1.ExtendedDaemonSetStrategy{
				RollingUpdate: v1alpha1.RollingUpdateStrategy{MaxUnavailable: &maxUnavailable},
			},
		},
	}
}

// Create creates obj.
func (s *Scenario) Create(obj client.Object) {
	s.T.Helper()
	s.G.Expect(s.Client.Create(s.Ctx, obj)).To(gomega.Succeed())
}

// Get reads the scenario's ExtendedDaemonSet name, around any cache.
func (s *Scenario) Get(g gomega.Gomega, name string) *v1alpha1.ExtendedDaemonSet {
	eds := &v1alpha1.ExtendedDaemonSet{}
	g.Expect(s.Client.Get(s.Ctx, types.NamespacedName{Namespace: s.Namespace, Name: name}, eds)).To(gomega.Succeed())
	return eds
}

// Update changes the scenario's ExtendedDaemonSet name, as a user would.
func (s *Scenario) Update(name string, change func(*v1alpha1.ExtendedDaemonSet)) {
	s.T.Helper()
	s.G.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		eds := &v1alpha1.ExtendedDaemonSet{}
		if err := s.Client.Get(s.Ctx, types.NamespacedName{Namespace: s.Namespace, Name: name}, eds); err != nil {
			return err
		}
		change(eds)
		return s.Client.Update(s.Ctx, eds)
	})).To(gomega.Succeed())
}

// WaitRolledOut waits until the ExtendedDaemonSet name is Ready at its
// generation, with every pod up to date and available.
func (s *Scenario) WaitRolledOut(name string) *v1alpha1.ExtendedDaemonSet {
	s.T.Helper()
	var eds *v1alpha1.ExtendedDaemonSet
	s.G.Eventually(func(g gomega.Gomega) {
		eds = s.Get(g, name)
		st := eds.Status
		g.Expect(st.ObservedGeneration).To(gomega.Equal(eds.Generation))
		g.Expect(apimeta.IsStatusConditionTrue(st.Conditions, v1alpha1.ReadyCondition)).To(gomega.BeTrue(), "Ready: %+v", st.Conditions)
		g.Expect(st.Canary).To(gomega.BeNil())
		g.Expect(st.Desired).To(gomega.BeNumerically(">", 0))
		g.Expect(st.UpToDate).To(gomega.Equal(st.Desired))
		g.Expect(st.Available).To(gomega.Equal(st.Desired))
	}).Should(gomega.Succeed())
	return eds
}
