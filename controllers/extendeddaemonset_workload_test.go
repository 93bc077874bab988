package controllers

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/store"
)

// daemonSetSim does, for one OnDelete DaemonSet, what the DaemonSet
// controller would in a cluster: it records each template as a
// ControllerRevision, observes the generation, and keeps a Running and
// Ready pod of the current revision on each node, finishing the deletion
// of the pods the controller deleted. The test steps it by hand.
type daemonSetSim struct {
	s        *scenario
	ds       *appsv1.DaemonSet
	nodes    []string
	revision int64
}

func (s *scenario) newDaemonSetSim(name, image string, nodes ...string) *daemonSetSim {
	labels := map[string]string{"app": name}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns},
		Spec: appsv1.DaemonSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: labels},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{nodeLabel: s.ns},
					Containers:   []corev1.Container{{Name: "agent", Image: image}},
				},
			},
		},
	}
	s.create(ds)
	sim := &daemonSetSim{s: s, ds: ds, nodes: nodes}
	sim.sync()
	return sim
}

// hash is the revision's hash, as the DaemonSet controller's pods carry it.
func (d *daemonSetSim) hash() string { return fmt.Sprintf("rev%d", d.revision) }

// setImage changes the DaemonSet's template, as a person would in git.
func (d *daemonSetSim) setImage(image string) {
	d.s.t.Helper()
	d.s.g.Expect(k8s.Get(d.s.ctx, client.ObjectKeyFromObject(d.ds), d.ds)).To(gomega.Succeed())
	d.ds.Spec.Template.Spec.Containers[0].Image = image
	d.s.g.Expect(k8s.Update(d.s.ctx, d.ds)).To(gomega.Succeed())
	d.sync()
}

// sync records the current template as a new revision and observes it.
func (d *daemonSetSim) sync() {
	d.s.t.Helper()
	g, ctx := d.s.g, d.s.ctx
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(d.ds), d.ds)).To(gomega.Succeed())
	d.revision++
	data, err := json.Marshal(map[string]any{"spec": map[string]any{"template": d.ds.Spec.Template}})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name: d.ds.Name + "-" + d.hash(), Namespace: d.ds.Namespace,
			Labels:          map[string]string{"app": d.ds.Name, appsv1.DefaultDaemonSetUniqueLabelKey: d.hash()},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d.ds, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))},
		},
		Data:     runtime.RawExtension{Raw: data},
		Revision: d.revision,
	}
	g.Expect(k8s.Create(ctx, cr)).To(gomega.Succeed())
	d.observe()
}

// observe records that the DaemonSet's controller saw its generation: a
// change of anything but the template makes no revision.
func (d *daemonSetSim) observe() {
	d.s.t.Helper()
	d.s.g.Expect(k8s.Get(d.s.ctx, client.ObjectKeyFromObject(d.ds), d.ds)).To(gomega.Succeed())
	d.ds.Status.ObservedGeneration = d.ds.Generation
	d.s.g.Expect(k8s.Status().Update(d.s.ctx, d.ds)).To(gomega.Succeed())
}

// pods returns the DaemonSet's pods, by node.
func (d *daemonSetSim) pods(g gomega.Gomega) map[string][]corev1.Pod {
	var list corev1.PodList
	g.Expect(k8s.List(d.s.ctx, &list, client.InNamespace(d.ds.Namespace), client.MatchingLabels{"app": d.ds.Name})).To(gomega.Succeed())
	return podsByNode(list.Items)
}

// reconcile finishes the deletions the controller asked for and starts a
// pod of the current revision on each node without one; it returns the
// nodes it started a pod on.
func (d *daemonSetSim) reconcile() []string {
	d.s.t.Helper()
	var started []string
	for _, node := range d.nodes {
		live := false
		for _, pod := range d.pods(d.s.g)[node] {
			if pod.DeletionTimestamp != nil {
				d.s.finishDeletion(&pod)
				continue
			}
			live = true
		}
		if live {
			continue
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				GenerateName: d.ds.Name + "-", Namespace: d.ds.Namespace,
				Labels:          map[string]string{"app": d.ds.Name, appsv1.DefaultDaemonSetUniqueLabelKey: d.hash()},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d.ds, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))},
			},
			Spec: *d.ds.Spec.Template.Spec.DeepCopy(),
		}
		pod.Spec.NodeName = node
		d.s.g.Expect(k8s.Create(d.s.ctx, pod)).To(gomega.Succeed())
		d.s.runPod(pod)
		started = append(started, node)
	}
	return started
}

// An ExtendedDaemonSet naming a DaemonSet rolls a template change of the
// DaemonSet out by deleting its pods (the DaemonSet recreates them) and
// never writes the DaemonSet: its resourceVersion and generation are
// those of the last write of the DaemonSet's own controller, through the
// whole rollout.
func TestWorkloadRefNeverWritesTheDaemonSet(t *testing.T) {
	s := newScenario(t)
	nodes := []string{s.createNode("a", nil).Name, s.createNode("b", nil).Name, s.createNode("c", nil).Name}
	sim := s.newDaemonSetSim("agent", imageV1, nodes...)
	sim.reconcile()
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: s.ns}}
	eds.Spec.WorkloadRef = &v1alpha1.WorkloadRef{APIVersion: "apps/v1", Kind: "DaemonSet", Name: sim.ds.Name}
	eds.Spec.Strategy.RollingUpdate.MaxSurge = nil
	s.create(eds)
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		expectRolledOut(g, e)
		g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(store.WorkloadReplicaSetName(eds.Name, sim.hash())))
		g.Expect(e.Status.UpToDate).To(gomega.BeEquivalentTo(len(nodes)))
	}).Should(gomega.Succeed())

	sim.setImage(imageV2)
	written := &appsv1.DaemonSet{}
	s.g.Expect(k8s.Get(s.ctx, client.ObjectKeyFromObject(sim.ds), written)).To(gomega.Succeed())
	// maxUnavailable 1: the controller deletes one old pod at a time, and
	// the DaemonSet brings each back at the new revision.
	replaced := map[string]bool{}
	s.g.Eventually(func(g gomega.Gomega) {
		for _, node := range sim.reconcile() {
			replaced[node] = true
		}
		g.Expect(replaced).To(gomega.HaveLen(len(nodes)))
		e := s.getEDS(g, eds.Name)
		expectRolledOut(g, e)
		g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(store.WorkloadReplicaSetName(eds.Name, sim.hash())))
	}).Should(gomega.Succeed())
	for node, pods := range sim.pods(s.g) {
		s.g.Expect(pods).To(gomega.HaveLen(1), "pods on %s", node)
		s.g.Expect(pods[0].Spec.Containers[0].Image).To(gomega.Equal(imageV2), "pod on %s", node)
	}
	latest := &appsv1.DaemonSet{}
	s.g.Expect(k8s.Get(s.ctx, client.ObjectKeyFromObject(sim.ds), latest)).To(gomega.Succeed())
	s.g.Expect(latest.ResourceVersion).To(gomega.Equal(written.ResourceVersion), "the DaemonSet was written")
	s.g.Expect(latest.Generation).To(gomega.Equal(written.Generation))
}

// A DaemonSet that is not OnDelete would roll every change out itself:
// the ExtendedDaemonSet naming it is Stalled and says which field to set;
// once the DaemonSet is OnDelete, it rolls out.
func TestWorkloadRefStallsUntilTheDaemonSetIsOnDelete(t *testing.T) {
	s := newScenario(t)
	nodes := []string{s.createNode("a", nil).Name}
	sim := s.newDaemonSetSim("agent", imageV1, nodes...)
	s.g.Expect(k8s.Get(s.ctx, client.ObjectKeyFromObject(sim.ds), sim.ds)).To(gomega.Succeed())
	sim.ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType}
	s.g.Expect(k8s.Update(s.ctx, sim.ds)).To(gomega.Succeed())
	sim.observe()
	sim.reconcile()
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: s.ns}}
	eds.Spec.WorkloadRef = &v1alpha1.WorkloadRef{APIVersion: "apps/v1", Kind: "DaemonSet", Name: sim.ds.Name}
	s.create(eds)
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(conditions.GetReason(e, v1alpha1.StalledCondition)).To(gomega.Equal(v1alpha1.ReasonInvalidSpec))
		g.Expect(conditions.GetMessage(e, v1alpha1.StalledCondition)).To(gomega.And(
			gomega.ContainSubstring("spec.updateStrategy.type"), gomega.ContainSubstring("OnDelete")))
	}).Should(gomega.Succeed())

	s.g.Expect(k8s.Get(s.ctx, client.ObjectKeyFromObject(sim.ds), sim.ds)).To(gomega.Succeed())
	sim.ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
	s.g.Expect(k8s.Update(s.ctx, sim.ds)).To(gomega.Succeed())
	sim.observe()
	s.g.Eventually(func(g gomega.Gomega) { expectRolledOut(g, s.getEDS(g, eds.Name)) }).Should(gomega.Succeed())
}

// Resource overrides cannot apply to the pods a DaemonSet creates: a
// setting naming an ExtendedDaemonSet with a workloadRef is in error.
func TestSettingOfAWorkloadRefIsRefused(t *testing.T) {
	s := newScenario(t)
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: s.ns}}
	eds.Spec.WorkloadRef = &v1alpha1.WorkloadRef{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent"}
	s.create(eds)
	setting := &v1alpha1.ExtendedDaemonsetSetting{
		ObjectMeta: metav1.ObjectMeta{Name: "large", Namespace: s.ns},
		Spec: v1alpha1.ExtendedDaemonsetSettingSpec{
			Reference:    &autoscalingv1.CrossVersionObjectReference{Kind: "ExtendedDaemonSet", Name: eds.Name},
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"size": "large"}},
			Containers:   []v1alpha1.ExtendedDaemonsetSettingContainerSpec{{Name: "agent"}},
		},
	}
	s.create(setting)
	s.g.Eventually(func(g gomega.Gomega) {
		got := &v1alpha1.ExtendedDaemonsetSetting{}
		g.Expect(k8s.Get(s.ctx, client.ObjectKeyFromObject(setting), got)).To(gomega.Succeed())
		g.Expect(got.Status.Status).To(gomega.Equal(v1alpha1.SettingError))
		g.Expect(got.Status.Error).To(gomega.ContainSubstring("rolls out the pods of DaemonSet agent"))
	}).Should(gomega.Succeed())
}
