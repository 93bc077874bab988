package clitest

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"maps"
	"strconv"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/envkubelet"
)

// envtest runs no DaemonSet controller. RunDaemonSet plays the parts of it
// an ExtendedDaemonSet whose workloadRef names a DaemonSet reads: it
// records each template as a ControllerRevision labelled with its
// controller-revision-hash (renumbering one whose template comes back, as
// the DaemonSet controller does), reports the DaemonSet's generation
// observed, and gives every scenario node without a pod one of the current
// revision; a pod deleted is gone at once and comes back at the current
// revision.

// NewDaemonSet is an OnDelete DaemonSet of one container with image on the
// scenario's nodes.
func (s *Scenario) NewDaemonSet(name, image string) *appsv1.DaemonSet {
	labels := map[string]string{"app": name}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Namespace},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{ScenarioLabel: s.Namespace},
					Containers:   []corev1.Container{{Name: "agent", Image: image}},
				},
			},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType},
		},
	}
}

// RunDaemonSet creates ds and plays its controller until the test ends,
// once every scenario node runs a ready pod of it.
func (s *Scenario) RunDaemonSet(ds *appsv1.DaemonSet) {
	s.T.Helper()
	s.Create(ds)
	go envkubelet.Run(s.Ctx, s.Client, client.InNamespace(s.Namespace), client.HasLabels{appsv1.DefaultDaemonSetUniqueLabelKey})
	p := &daemonSetPlayer{c: s.Client, key: client.ObjectKeyFromObject(ds), scenario: s.Namespace}
	go func() {
		ticker := time.NewTicker(polling / 2)
		defer ticker.Stop()
		for {
			select {
			case <-s.Ctx.Done():
				return
			case <-ticker.C:
			}
			// A conflict, or an object gone meanwhile, is looked at again
			// on the next tick.
			_ = p.sync(s.Ctx)
		}
	}()
	s.G.Eventually(func(g gomega.Gomega) {
		got := &appsv1.DaemonSet{}
		g.Expect(s.Client.Get(s.Ctx, p.key, got)).To(gomega.Succeed())
		g.Expect(got.Status.ObservedGeneration).To(gomega.Equal(got.Generation))
		g.Expect(got.Status.DesiredNumberScheduled).To(gomega.BeNumerically(">", 0))
		g.Expect(got.Status.NumberReady).To(gomega.Equal(got.Status.DesiredNumberScheduled))
	}).Should(gomega.Succeed())
}

// UpdateDaemonSet changes the scenario's DaemonSet name, as its owner
// would.
func (s *Scenario) UpdateDaemonSet(name string, change func(*appsv1.DaemonSet)) {
	s.T.Helper()
	s.G.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ds := &appsv1.DaemonSet{}
		if err := s.Client.Get(s.Ctx, types.NamespacedName{Namespace: s.Namespace, Name: name}, ds); err != nil {
			return err
		}
		change(ds)
		return s.Client.Update(s.Ctx, ds)
	})).To(gomega.Succeed())
}

// DaemonSetPods are the live pods of the scenario's DaemonSet name, by
// the image of their first container.
func (s *Scenario) DaemonSetPods(g gomega.Gomega, name string) map[string]int {
	var pods corev1.PodList
	g.Expect(s.Client.List(s.Ctx, &pods, client.InNamespace(s.Namespace), client.MatchingLabels{"app": name})).To(gomega.Succeed())
	images := map[string]int{}
	for _, pod := range pods.Items {
		if pod.DeletionTimestamp == nil {
			images[pod.Spec.Containers[0].Image]++
		}
	}
	return images
}

type daemonSetPlayer struct {
	c        client.Client
	key      types.NamespacedName
	scenario string
}

func (p *daemonSetPlayer) sync(ctx context.Context) error {
	ds := &appsv1.DaemonSet{}
	if err := p.c.Get(ctx, p.key, ds); err != nil {
		return err
	}
	hash, err := p.record(ctx, ds)
	if err != nil {
		return err
	}
	var nodes corev1.NodeList
	if err := p.c.List(ctx, &nodes, client.MatchingLabels{ScenarioLabel: p.scenario}); err != nil {
		return err
	}
	var pods corev1.PodList
	if err := p.c.List(ctx, &pods, client.InNamespace(ds.Namespace), client.MatchingLabels(ds.Spec.Selector.MatchLabels)); err != nil {
		return err
	}
	onNode := map[string][]*corev1.Pod{}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if ref := metav1.GetControllerOf(pod); ref != nil && ref.UID == ds.UID {
			onNode[pod.Spec.NodeName] = append(onNode[pod.Spec.NodeName], pod)
		}
	}
	st := appsv1.DaemonSetStatus{ObservedGeneration: ds.Generation, DesiredNumberScheduled: int32(len(nodes.Items))}
	for _, node := range nodes.Items {
		// A pod being deleted holds its node until it is gone, which the
		// kubelet sees to at once.
		if len(onNode[node.Name]) == 0 {
			if err := p.createPod(ctx, ds, hash, node.Name); err != nil {
				return err
			}
			continue
		}
		st.CurrentNumberScheduled++
		for _, pod := range onNode[node.Name] {
			if pod.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] == hash {
				st.UpdatedNumberScheduled++
			}
			if podReady(pod) {
				st.NumberReady++
				st.NumberAvailable++
			}
		}
	}
	st.NumberUnavailable = st.DesiredNumberScheduled - st.NumberAvailable
	if equality.Semantic.DeepEqual(ds.Status, st) {
		return nil
	}
	// The DaemonSet controller's status writes are what wake an
	// ExtendedDaemonSet that references it.
	ds.Status = st
	return p.c.Status().Update(ctx, ds)
}

// record returns the hash of ds's template, recorded as its newest
// ControllerRevision.
func (p *daemonSetPlayer) record(ctx context.Context, ds *appsv1.DaemonSet) (string, error) {
	var list appsv1.ControllerRevisionList
	if err := p.c.List(ctx, &list, client.InNamespace(ds.Namespace), client.MatchingLabels(ds.Spec.Selector.MatchLabels)); err != nil {
		return "", err
	}
	var newest int64
	var same *appsv1.ControllerRevision
	for i := range list.Items {
		cr := &list.Items[i]
		if ref := metav1.GetControllerOf(cr); ref == nil || ref.UID != ds.UID {
			continue
		}
		newest = max(newest, cr.Revision)
		var data struct {
			Spec struct {
				Template corev1.PodTemplateSpec `json:"template"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(cr.Data.Raw, &data); err != nil {
			return "", err
		}
		if equality.Semantic.DeepEqual(&data.Spec.Template, &ds.Spec.Template) {
			same = cr
		}
	}
	if same != nil {
		if same.Revision != newest {
			same.Revision = newest + 1
			if err := p.c.Update(ctx, same); err != nil {
				return "", err
			}
		}
		return same.Labels[appsv1.DefaultDaemonSetUniqueLabelKey], nil
	}
	template, err := json.Marshal(ds.Spec.Template)
	if err != nil {
		return "", err
	}
	hasher := fnv.New32a()
	_, _ = hasher.Write(template)
	hash := utilrand.SafeEncodeString(strconv.FormatUint(uint64(hasher.Sum32()), 10))
	var patch map[string]any
	if err := json.Unmarshal(template, &patch); err != nil {
		return "", err
	}
	patch["$patch"] = "replace"
	data, err := json.Marshal(map[string]any{"spec": map[string]any{"template": patch}})
	if err != nil {
		return "", err
	}
	labels := maps.Clone(ds.Spec.Template.Labels)
	labels[appsv1.DefaultDaemonSetUniqueLabelKey] = hash
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name: ds.Name + "-" + hash, Namespace: ds.Namespace, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))},
		},
		Data:     runtime.RawExtension{Raw: data},
		Revision: newest + 1,
	}
	return hash, p.c.Create(ctx, cr)
}

func (p *daemonSetPlayer) createPod(ctx context.Context, ds *appsv1.DaemonSet, hash, node string) error {
	labels := maps.Clone(ds.Spec.Template.Labels)
	labels[appsv1.DefaultDaemonSetUniqueLabelKey] = hash
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: ds.Name + "-", Namespace: ds.Namespace, Labels: labels, Annotations: ds.Spec.Template.Annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))},
		},
		Spec: *ds.Spec.Template.Spec.DeepCopy(),
	}
	pod.Spec.NodeName = node
	return p.c.Create(ctx, pod)
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// NewReferencingExtendedDaemonSet is an ExtendedDaemonSet whose
// workloadRef names the scenario's DaemonSet daemonSet, rolling one node
// at a time, with no canary.
func (s *Scenario) NewReferencingExtendedDaemonSet(name, daemonSet string) *v1alpha1.ExtendedDaemonSet {
	maxUnavailable := intstr.FromInt32(1)
	return &v1alpha1.ExtendedDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Namespace},
		Spec: v1alpha1.ExtendedDaemonSetSpec{
			WorkloadRef: &v1alpha1.WorkloadRef{APIVersion: "apps/v1", Kind: "DaemonSet", Name: daemonSet},
			Strategy: v1alpha1.ExtendedDaemonSetStrategy{
				RollingUpdate: v1alpha1.RollingUpdateStrategy{MaxUnavailable: &maxUnavailable},
			},
		},
	}
}
