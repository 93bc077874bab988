package model

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// Names of the model's objects.
const (
	namespace = "agents"
	edsName   = "agent"
	zoneLabel = "topology.kubernetes.io/zone"
	// karpenterDisrupted is the taint Karpenter puts on a node it takes
	// away: one of the ways a node enters maintenance.
	karpenterDisrupted = "karpenter.sh/disrupted"
	oldDSName          = "old-agent"
	container          = "agent"
	heldReason         = "ImagePullBackOff"
	crashReason        = "CrashLoopBackOff"
	// tick is how far the clock moves between two kubelet and controller
	// rounds while time passes.
	tick = 5 * time.Second
	// actionGap is the time an action other than a wait takes.
	actionGap = time.Millisecond
)

// Timings of the model's ExtendedDaemonSet: short enough for a sequence of
// a few minutes to cross them.
const (
	canaryDuration   = 60 * time.Second
	stepDuration     = 30 * time.Second
	bakeTime         = 30 * time.Second
	progressDeadline = 120 * time.Second
	// defaultVerdictDelay is when an analysis nobody spoke for passes,
	// counted from its canary's pods being ready.
	defaultVerdictDelay = 2 * time.Minute
	// neverVerdictDelay is when an analysis that gets no data turns
	// Inconclusive (its inconclusiveLimit reached).
	neverVerdictDelay = 3 * time.Minute
)

// Config is the cluster a sequence starts from.
type Config struct {
	// Nodes in Zones zones; 6 in 3 when unset.
	Nodes, Zones int
	// MaxUnavailable (1 when unset) and MaxSurge of the rolling update.
	MaxUnavailable, MaxSurge int
	// Handover starts the ExtendedDaemonSet on a cluster where a DaemonSet
	// runs the agent on every node, named by the old-daemonset annotation.
	Handover bool
	// SelectorUnset leaves spec.selector unset (the template labels).
	SelectorUnset bool
	// BarePod adds a pod without a controller, not the agent, to the
	// namespace.
	BarePod bool
	// Untainted: nodes that are not Ready get no unreachable taint, as
	// on a cluster without a node lifecycle controller (the simulated
	// one); with it, such a node is no longer a place for a new pod.
	Untainted bool
	// Steps, Topology, Manual and Analysis are the settings turned on at
	// the start (a canary always is).
	Steps, Topology, Manual, Analysis bool
	// Workload: the ExtendedDaemonSet has no template of its own; its
	// workloadRef names a DaemonSet updated OnDelete, whose template the
	// template changes change and whose controller creates the pods.
	// MaxSurge, Handover, SelectorUnset and BarePod are ignored (the API
	// refuses what they stand for), and so are the in-place and handover
	// toggles.
	Workload bool
}

func (c Config) withDefaults() Config {
	if c.Nodes <= 0 {
		c.Nodes = 6
	}
	if c.Zones <= 0 {
		c.Zones = 3
	}
	if c.MaxUnavailable <= 0 {
		c.MaxUnavailable = 1
	}
	if c.Workload {
		c.MaxSurge, c.Handover, c.SelectorUnset, c.BarePod = 0, false, false, false
	}
	return c
}

// Cluster is the in-memory cluster a sequence is played on.
type Cluster struct {
	cfg   Config
	now   time.Time
	nodes []*corev1.Node
	pods  map[string]*corev1.Pod
	eds   *v1alpha1.ExtendedDaemonSet
	// spec is the spec as people last wrote it, from template, flags and
	// twins: the controller never changes it.
	spec        v1alpha1.ExtendedDaemonSetSpec
	template    int
	flags       flags
	twins       twins
	annotations map[string]string
	sets        map[string]*v1alpha1.ExtendedDaemonSetReplicaSet
	// templateOf is the template number of a replica set.
	templateOf map[string]int
	// ds is the DaemonSet being taken over, nil when there is none (or
	// it was deleted with --cascade=orphan).
	ds *oldDaemonSet
	// workload is the DaemonSet the workloadRef names, nil without one.
	workload *workloadDaemonSet
	progress map[string]progress
	// specErr is the error of the last canary step, when there was one;
	// edsErr the error that ended the last ExtendedDaemonSet pass early.
	specErr, edsErr error

	fitters map[int]*placement.Fitter
	// planned is, per replica set, the planner state its passes keep and
	// what they last told it of each node.
	planned map[string]*keptPlan
	// requeueAt is the soonest pass a pass asked for, zero for none.
	requeueAt time.Time
	writes    int
	hold      bool
	held      map[string]bool
	crashLoop map[string]bool
	serial    int
	retries   int

	// failedTemplate is the template whose canary failed last, -1 when
	// none has.
	failedTemplate int

	promises
	// trace, when set, tells every write of the controller.
	trace func(format string, args ...any)
}

type oldDaemonSet struct {
	uid      types.UID
	selector map[string]string
}

// New is a cluster where template 0 is rolled out, or, with Handover, is
// about to replace a DaemonSet's pods.
func New(cfg Config) *Cluster {
	cfg = cfg.withDefaults()
	c := &Cluster{
		cfg: cfg, now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		pods: map[string]*corev1.Pod{}, sets: map[string]*v1alpha1.ExtendedDaemonSetReplicaSet{},
		templateOf: map[string]int{}, progress: map[string]progress{},
		held: map[string]bool{}, crashLoop: map[string]bool{}, failedTemplate: -1,
		annotations: map[string]string{}, fitters: map[int]*placement.Fitter{},
		planned: map[string]*keptPlan{},
	}
	c.init()
	for i := range cfg.Nodes {
		c.addNode(i % cfg.Zones)
	}
	c.flags = flags{canary: true, steps: cfg.Steps, topology: cfg.Topology, manual: cfg.Manual, analysis: cfg.Analysis}
	c.eds = &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: edsName, UID: "eds-uid", Generation: 1}}
	if cfg.BarePod {
		c.pods["database"] = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "database", Labels: map[string]string{"app": "database"}, CreationTimestamp: metav1.Time{Time: c.now}},
			Spec:       corev1.PodSpec{NodeName: c.nodes[0].Name},
			Status:     runningStatus(c.now),
		}
	}
	if cfg.Workload {
		c.newWorkload()
	}
	if cfg.Handover {
		c.ds = &oldDaemonSet{uid: "ds-uid", selector: map[string]string{"app": "agent"}}
		c.annotations[v1alpha1.OldDaemonSetAnnotation] = oldDSName
		for _, n := range c.nodes {
			c.daemonSetPod(n.Name, true)
		}
	}
	c.publish()
	// Template 0 rolled out (or, with a handover, waiting for the
	// DaemonSet to go): the controller creates its pods and the kubelet
	// starts them.
	c.settle()
	c.advance(3 * tick)
	c.reset(c)
	return c
}

// flags are the settings people turned on.
type flags struct {
	canary, steps, topology, inPlace, manual, analysis bool
}

// twins are the spec twins of the steering values and pauses.
type twins struct {
	validate, fail, unpause, skipStep, retry string
	canaryPaused, rollingPaused, frozen      bool
}

// buildSpec is the spec people wrote: the current template, the settings
// on, and the spec twins given.
func (c *Cluster) buildSpec() v1alpha1.ExtendedDaemonSetSpec {
	spec := v1alpha1.ExtendedDaemonSetSpec{
		Template:                template(c.template),
		ProgressDeadlineSeconds: ptr(int32(progressDeadline / time.Second)),
		Strategy: v1alpha1.ExtendedDaemonSetStrategy{
			RollingUpdate: v1alpha1.RollingUpdateStrategy{
				MaxUnavailable: ptr(intstr.FromInt32(int32(c.cfg.MaxUnavailable))),
				MaxSurge:       ptr(intstr.FromInt32(int32(c.cfg.MaxSurge))),
				Paused:         c.twins.rollingPaused,
				Frozen:         c.twins.frozen,
			},
		},
	}
	switch {
	case c.cfg.Workload:
		// The DaemonSet's template and selector are the ones rolled out.
		spec.Template, spec.Strategy.RollingUpdate.MaxSurge = corev1.PodTemplateSpec{}, nil
		spec.WorkloadRef = &v1alpha1.WorkloadRef{APIVersion: "apps/v1", Kind: "DaemonSet", Name: workloadName}
	case !c.cfg.SelectorUnset:
		spec.Selector = &v1alpha1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}
	}
	ru := &spec.Strategy.RollingUpdate
	if c.flags.inPlace {
		ru.Type = v1alpha1.RollingUpdateInPlaceIfPossible
	}
	if c.flags.topology {
		ru.Topology = &v1alpha1.RollingUpdateTopology{
			Key: zoneLabel, MaxUnavailablePerDomain: ptr(intstr.FromInt32(1)),
			Order: v1alpha1.TopologySequential, DomainBakeTime: &metav1.Duration{Duration: bakeTime},
		}
	}
	if !c.flags.canary {
		return spec
	}
	cs := &v1alpha1.CanaryStrategy{
		Replicas: ptr(intstr.FromInt32(1)),
		Duration: &metav1.Duration{Duration: canaryDuration},
		Paused:   c.twins.canaryPaused, Validate: c.twins.validate, Unpause: c.twins.unpause,
		SkipStep: c.twins.skipStep, Fail: c.twins.fail, Retry: c.twins.retry,
	}
	if c.flags.steps {
		cs.Steps = []v1alpha1.CanaryStep{
			// 2 then 50%: on a cluster shrunk to 2 nodes, the second step
			// resolves smaller than the first.
			{Replicas: intstr.FromInt32(2), Duration: &metav1.Duration{Duration: stepDuration}},
			{Replicas: intstr.FromString("50%"), Duration: &metav1.Duration{Duration: stepDuration}},
		}
	}
	if c.flags.manual {
		cs.ValidationMode = v1alpha1.CanaryValidationManual
	}
	if c.flags.analysis {
		cs.Analysis = &v1alpha1.CanaryAnalysis{
			Provider: v1alpha1.AnalysisProvider{Prometheus: &v1alpha1.PrometheusProvider{Address: "http://prometheus.example:9090"}},
			Metrics:  []v1alpha1.AnalysisMetric{{Name: "restarts", Preset: v1alpha1.MetricPresetRestarts}},
		}
	}
	spec.Strategy.Canary = cs
	return spec
}

func template(k int) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: container, Image: fmt.Sprintf("registry.example/agent:v%d", k)}}},
	}
}

// templateNumber is the number of a template the model made.
func templateNumber(t *corev1.PodTemplateSpec) int {
	var k int
	if len(t.Spec.Containers) == 1 {
		_, _ = fmt.Sscanf(t.Spec.Containers[0].Image, "registry.example/agent:v%d", &k)
	}
	return k
}

// publish writes the spec and annotations people own into the object the
// controller reads, as an apply does.
func (c *Cluster) publish() {
	before := c.eds.Spec.DeepCopy()
	c.spec = c.buildSpec()
	c.eds.Spec = *c.spec.DeepCopy()
	c.eds.Annotations = map[string]string{}
	for k, v := range c.annotations {
		c.eds.Annotations[k] = v
	}
	if !equalSpec(before, &c.eds.Spec) {
		c.eds.Generation++
	}
	if ds := c.workload; ds != nil && ds.template != c.template {
		ds.template = c.template
		ds.generation++
	}
}

func (c *Cluster) addNode(zone int) *corev1.Node {
	name := fmt.Sprintf("node-%02d", c.serial)
	c.serial++
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{zoneLabel: fmt.Sprintf("zone-%d", zone), "kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Time{Time: c.now},
		}}},
	}
	c.nodes = append(c.nodes, n)
	return n
}

func (c *Cluster) node(name string) *corev1.Node {
	for _, n := range c.nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// nodeReady is the controller's one reading of a node's Ready condition.
func nodeReady(n *corev1.Node) bool { return placement.NodeReadiness(n).Ready() }

func setNodeReady(n *corev1.Node, status corev1.ConditionStatus, now time.Time, taint bool) {
	for i := range n.Status.Conditions {
		if cond := &n.Status.Conditions[i]; cond.Type == corev1.NodeReady && cond.Status != status {
			cond.Status, cond.LastTransitionTime = status, metav1.Time{Time: now}
		}
	}
	n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeUnreachable })
	if status != corev1.ConditionTrue && taint {
		n.Spec.Taints = append(n.Spec.Taints,
			corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
			corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute})
	}
}

func runningStatus(now time.Time) corev1.PodStatus {
	return corev1.PodStatus{
		Phase:      corev1.PodRunning,
		StartTime:  &metav1.Time{Time: now},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Time{Time: now}}},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: container, Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		}},
	}
}

func (c *Cluster) daemonSetPod(node string, running bool) {
	name := fmt.Sprintf("%s-%s", oldDSName, node)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: name, Labels: map[string]string{"app": "agent"}, CreationTimestamp: metav1.Time{Time: c.now},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: oldDSName, UID: c.ds.uid, Controller: ptr(true)}},
			Annotations:     map[string]string{daemonSetPodAnnotation: "true"},
		},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: container, Image: "registry.example/agent:old"}}},
	}
	if running {
		pod.Status = runningStatus(c.now)
	} else {
		pod.Status.Phase = corev1.PodPending
	}
	c.pods[name] = pod
}

// daemonSetPodAnnotation marks, in the model only, the pods the old
// DaemonSet made, so the promises know them as the agent's.
const daemonSetPodAnnotation = "model.test/daemonset-pod"

// edsPods are the ExtendedDaemonSet's pods, by name: those it created, or
// the DaemonSet's its workloadRef names. These are the cluster's own
// objects, for the model to change; the controller's passes read
// podsOf's view of them.
func (c *Cluster) edsPods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range c.sortedPods() {
		if p.Labels[v1alpha1.ExtendedDaemonSetNameLabel] == edsName || isWorkloadPod(p) {
			out = append(out, p)
		}
	}
	return out
}

func (c *Cluster) sortedPods() []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(c.pods))
	for _, p := range c.pods {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// agent reports whether a pod is an agent: the ExtendedDaemonSet's, the
// old DaemonSet's, or the DaemonSet's a workloadRef names.
func agent(p *corev1.Pod) bool {
	return p.Labels[v1alpha1.ExtendedDaemonSetNameLabel] == edsName || p.Annotations[daemonSetPodAnnotation] != "" || isWorkloadPod(p)
}

// podReady: a live running pod that is ready, by the controller's one
// definition of a ready pod.
func podReady(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && placement.PodReady(p)
}

func setPodReady(p *corev1.Pod, ready bool, now time.Time) {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	found := false
	for i := range p.Status.Conditions {
		if cond := &p.Status.Conditions[i]; cond.Type == corev1.PodReady {
			found = true
			if cond.Status != status {
				cond.Status, cond.LastTransitionTime = status, metav1.Time{Time: now}
			}
		}
	}
	if !found {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Time{Time: now}})
	}
	for i := range p.Status.ContainerStatuses {
		p.Status.ContainerStatuses[i].Ready = ready
	}
}

func ptr[T any](v T) *T { return &v }
