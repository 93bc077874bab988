package model

import (
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/bake"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// The DaemonSet a workloadRef names (Config.Workload), and the DaemonSet
// controller that keeps its pods: the part of the cluster the
// ExtendedDaemonSet does not own. Its mirrors of package controllers are
// in glue_workload.go.

// Names of the referenced DaemonSet.
const (
	workloadName = "agent"
	workloadUID  = "workload-uid"
	// lookalikeName is a pod that carries the DaemonSet's labels, its
	// revision's hash among them, but no controller: a pod the controller
	// must never take for one of the DaemonSet's.
	lookalikeName = "agent-lookalike"
)

// workloadDaemonSet is the DaemonSet a workloadRef names, updated OnDelete.
type workloadDaemonSet struct {
	// template is the template number of spec.template, as people last
	// wrote it.
	template int
	// generation and observedGeneration: the DaemonSet controller records
	// a template (revision is its number) one round after it is written.
	generation, observedGeneration int64
	revision                       int
	// status is its status as the DaemonSet controller last wrote it.
	status daemonSetStatus
}

// daemonSetStatus is what a DaemonSet's status counts, computed as the
// DaemonSet controller does (the oldest pod of each node speaks for it). A
// change of it is the one event the reconcilers get of the DaemonSet's
// pods, which no watch of theirs sees.
type daemonSetStatus struct {
	desired, scheduled, misscheduled, ready, updated int
	observedGeneration                               int64
}

// spec is the DaemonSet's spec.template.
func (ds *workloadDaemonSet) spec() corev1.PodTemplateSpec { return template(ds.template) }

// isWorkloadPod reports whether the referenced DaemonSet controls p.
func isWorkloadPod(p *corev1.Pod) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.UID == workloadUID
}

// replicaSetOf is the replica set a pod of the ExtendedDaemonSet belongs
// to: its label, or for the DaemonSet's pods, the replica set of the
// revision it runs.
func replicaSetOf(p *corev1.Pod) string {
	if isWorkloadPod(p) {
		return workloadReplicaSetName(edsName, p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey])
	}
	return p.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel]
}

// newWorkload starts the DaemonSet at template 0, recorded, with a
// running pod on every node, and the lookalike on the first.
func (c *Cluster) newWorkload() {
	c.workload = &workloadDaemonSet{generation: 1, observedGeneration: 1}
	for _, n := range c.nodes {
		pod := c.workloadPod(n.Name)
		pod.Status = runningStatus(c.now)
	}
	if len(c.nodes) > 0 {
		c.pods[lookalikeName] = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: namespace, Name: lookalikeName, CreationTimestamp: metav1.Time{Time: c.now},
				Labels: map[string]string{"app": "agent", appsv1.DefaultDaemonSetUniqueLabelKey: hashOf(0)},
			},
			Spec:   corev1.PodSpec{NodeName: c.nodes[0].Name, Containers: []corev1.Container{{Name: container, Image: "registry.example/agent:v0"}}},
			Status: runningStatus(c.now),
		}
	}
	c.workload.status = c.daemonSetStatus()
}

// workloadPod creates, as the DaemonSet controller does, a pod of the
// DaemonSet's current revision on node, Pending.
func (c *Cluster) workloadPod(node string) *corev1.Pod {
	tmpl := template(c.workload.revision)
	pod := placement.NewPod(&tmpl, node, map[string]string{appsv1.DefaultDaemonSetUniqueLabelKey: hashOf(c.workload.revision)})
	pod.Namespace, pod.Name = namespace, fmt.Sprintf("%s-%s-%d", workloadName, node, c.serial)
	c.serial++
	pod.CreationTimestamp = metav1.Time{Time: c.now}
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: workloadName, UID: workloadUID, Controller: ptr(true)}}
	pod.Spec.NodeName = node
	pod.Status.Phase = corev1.PodPending
	c.pods[pod.Name] = pod
	if c.hold {
		c.held[pod.Name] = true
	}
	return pod
}

// daemonSetController is one round of the DaemonSet's controller: it
// records the template as the current revision, and creates a pod at that
// revision on every node that should run one and has none (a pod still
// terminating counts: it waits for it to go). It neither deletes pods nor
// changes them (OnDelete). It reports whether the DaemonSet's status
// moved.
func (c *Cluster) daemonSetController() bool {
	ds := c.workload
	ds.observedGeneration, ds.revision = ds.generation, ds.template
	tmpl := template(ds.revision)
	fitter := c.fitter(&tmpl)
	has := map[string]bool{}
	for _, p := range c.pods {
		if isWorkloadPod(p) {
			has[placement.TargetNode(p)] = true
		}
	}
	for _, n := range c.nodes {
		if !has[n.Name] && fitter.Fit(n).ShouldRun {
			if c.trace != nil {
				c.trace("DaemonSet %s creates a pod of revision %s on %s", workloadName, hashOf(ds.revision), n.Name)
			}
			c.workloadPod(n.Name)
		}
	}
	before := ds.status
	ds.status = c.daemonSetStatus()
	return ds.status != before
}

// daemonSetStatus counts the DaemonSet's status from its pods.
func (c *Cluster) daemonSetStatus() daemonSetStatus {
	ds := c.workload
	st := daemonSetStatus{observedGeneration: ds.observedGeneration}
	oldest := map[string]*corev1.Pod{}
	for _, p := range c.sortedPods() {
		if !isWorkloadPod(p) {
			continue
		}
		node := placement.TargetNode(p)
		if o := oldest[node]; o == nil || p.CreationTimestamp.Before(&o.CreationTimestamp) {
			oldest[node] = p
		}
	}
	tmpl := template(ds.revision)
	fitter := c.fitter(&tmpl)
	for _, n := range c.nodes {
		pod := oldest[n.Name]
		if !fitter.Fit(n).ShouldRun {
			if pod != nil {
				st.misscheduled++
			}
			continue
		}
		st.desired++
		if pod == nil {
			continue
		}
		st.scheduled++
		if placement.PodReady(pod) {
			st.ready++
		}
		if pod.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] == hashOf(ds.revision) {
			st.updated++
		}
	}
	return st
}

// peopleTemplate is the template people last wrote: the
// ExtendedDaemonSet's, or the DaemonSet's its workloadRef names.
func (c *Cluster) peopleTemplate() corev1.PodTemplateSpec {
	if c.workload != nil {
		return c.workload.spec()
	}
	return c.eds.Spec.Template
}

// The mirrors of package controllers (extendeddaemonset_workload.go,
// replicaset_workload.go, internal/store/workload.go). The DaemonSet is
// always found, and updated OnDelete: the spec errors of DaemonSetOf do
// not arise.

// errRevisionPending mirrors the error of the same name.
var errRevisionPending = errors.New("waiting for the controller of DaemonSet " + workloadName + " to record its current template")

// templateRevision mirrors store.Revision: a template number and its template.
type templateRevision struct {
	number   int
	template corev1.PodTemplateSpec
}

// currentRevision mirrors ExtendedDaemonSetReconciler.currentRevision and
// store.CurrentRevision: the ExtendedDaemonSet's template, or the
// DaemonSet's newest recorded revision, pending until its controller has
// observed its generation.
func (c *Cluster) currentRevision() (*templateRevision, error) {
	if c.eds.Spec.WorkloadRef == nil {
		return &templateRevision{number: templateNumber(&c.eds.Spec.Template), template: c.eds.Spec.Template}, nil
	}
	ds := c.workload
	if ds.observedGeneration < ds.generation {
		return nil, errRevisionPending
	}
	return &templateRevision{number: ds.revision, template: template(ds.revision)}, nil
}

// workloadReplicaSetName mirrors store.WorkloadReplicaSetName.
func workloadReplicaSetName(eds, hash string) string { return eds + "-" + hash }

// podsOf mirrors ExtendedDaemonSetReconciler.podsOf: the pods the
// ExtendedDaemonSet's label selects (store.PodsOf), or the DaemonSet's
// (daemonSetPods).
func (c *Cluster) podsOf() []*corev1.Pod {
	if c.eds.Spec.WorkloadRef == nil {
		return c.labelledPods()
	}
	return c.daemonSetPods()
}

// labelledPods are the pods that carry the ExtendedDaemonSet's label, as
// store.PodsOf selects them.
func (c *Cluster) labelledPods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range c.sortedPods() {
		if p.Labels[v1alpha1.ExtendedDaemonSetNameLabel] == edsName {
			out = append(out, p)
		}
	}
	return out
}

// daemonSetPods mirrors store.DaemonSetPods, the list call included: the
// pods the DaemonSet's selector matches that it controls, each a copy
// labelled as a pod of the replica set of its revision.
func (c *Cluster) daemonSetPods() []*corev1.Pod {
	selector := labels.SelectorFromSet(labels.Set{"app": "agent"})
	var pods []*corev1.Pod
	for _, p := range c.sortedPods() {
		if !selector.Matches(labels.Set(p.Labels)) {
			continue
		}
		if ref := metav1.GetControllerOf(p); ref == nil || ref.UID != workloadUID {
			continue
		}
		pod := *p
		hash := pod.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]
		l := make(map[string]string, len(pod.Labels)+3)
		for k, v := range pod.Labels {
			l[k] = v
		}
		l[v1alpha1.ExtendedDaemonSetNameLabel] = edsName
		l[v1alpha1.TemplateHashLabel] = hash
		l[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel] = workloadReplicaSetName(edsName, hash)
		pod.Labels = l
		pods = append(pods, &pod)
	}
	return pods
}

// workloadPods mirrors the type of the same name.
type workloadPods struct {
	daemonSet string
	pods      []*corev1.Pod
	template  *corev1.PodTemplateSpec
	specErr   error
	own       bool
}

// rsPodsOf mirrors ReplicaSetReconciler.podsOf.
func (c *Cluster) rsPodsOf(ers *v1alpha1.ExtendedDaemonSetReplicaSet) ([]*corev1.Pod, *workloadPods) {
	if c.eds.Spec.WorkloadRef == nil {
		return c.labelledPods(), nil
	}
	w := &workloadPods{daemonSet: c.eds.Spec.WorkloadRef.Name}
	w.pods = c.daemonSetPods()
	spec := c.workload.spec()
	w.template = &spec
	w.own = c.workload.observedGeneration >= c.workload.generation && equality.Semantic.DeepEqual(&ers.Spec.Template, &spec)
	return w.pods, w
}

// templateOr mirrors the method of the same name.
func (w *workloadPods) templateOr(otherwise *corev1.PodTemplateSpec) *corev1.PodTemplateSpec {
	if w == nil {
		return otherwise
	}
	return w.template
}

// err mirrors the method of the same name in replicaset_workload.go.
func (w *workloadPods) err() error {
	if w == nil {
		return nil
	}
	return w.specErr
}

// waiting mirrors the method of the same name.
func (w *workloadPods) waiting() string {
	if w == nil || w.own || w.specErr != nil {
		return ""
	}
	return fmt.Sprintf("DaemonSet %s creates pods at another template than this replica set's", w.daemonSet)
}

// workloadPoll mirrors store.WorkloadPoll.
const workloadPoll = 10 * time.Second

// bakeJudging mirrors the function of the same name.
func bakeJudging(eds *v1alpha1.ExtendedDaemonSet) bool {
	b := eds.Status.Bake
	return b != nil && !bake.Failed(b) && !bake.Passed(b, b.Domain)
}
