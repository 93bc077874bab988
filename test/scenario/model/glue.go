package model

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/bake"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// This file mirrors the glue of package controllers: how a reconcile
// builds the inputs of the pure decisions and records their results. Each
// function names the one it copies; a change there must be made here too.

func equalSpec(a, b *v1alpha1.ExtendedDaemonSetSpec) bool { return equality.Semantic.DeepEqual(a, b) }

func hashOf(k int) string { return "t" + strconv.Itoa(k) }

// currentName is the replica set of the current template, empty before
// the controller made it: with a workloadRef, of the revision the
// DaemonSet's controller recorded last.
func (c *Cluster) currentName() string {
	current := templateNumber(&c.eds.Spec.Template)
	if c.workload != nil {
		current = c.workload.revision
	}
	for name, k := range c.templateOf {
		if k == current {
			return name
		}
	}
	return ""
}

// sortedSets are the replica sets, oldest revision first.
func (c *Cluster) sortedSets() []*v1alpha1.ExtendedDaemonSetReplicaSet {
	out := make([]*v1alpha1.ExtendedDaemonSetReplicaSet, 0, len(c.sets))
	for _, ers := range c.sets {
		out = append(out, ers)
	}
	slices.SortFunc(out, func(a, b *v1alpha1.ExtendedDaemonSetReplicaSet) int { return revision(a) - revision(b) })
	return out
}

func revision(ers *v1alpha1.ExtendedDaemonSetReplicaSet) int {
	n, _ := strconv.Atoi(ers.Annotations[v1alpha1.RevisionAnnotation])
	return n
}

// currentReplicaSet mirrors ExtendedDaemonSetReconciler.currentReplicaSet
// and newReplicaSet: one replica set per template (currentRevision),
// reused when the template comes back. The model names every replica set
// as store.WorkloadReplicaSetName does, after its template's hash.
func (c *Cluster) currentReplicaSet() (*v1alpha1.ExtendedDaemonSetReplicaSet, error) {
	rev, err := c.currentRevision()
	if err != nil {
		return nil, err
	}
	k := rev.number
	for name, n := range c.templateOf {
		if n == k {
			return c.sets[name], nil
		}
	}
	number := len(c.sets) + 1
	name := workloadReplicaSetName(edsName, hashOf(k))
	ers := &v1alpha1.ExtendedDaemonSetReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: name, Generation: 1,
			Labels:      map[string]string{v1alpha1.ExtendedDaemonSetNameLabel: edsName, v1alpha1.TemplateHashLabel: hashOf(k)},
			Annotations: map[string]string{v1alpha1.TemplateHashAnnotation: hashOf(k), v1alpha1.RevisionAnnotation: strconv.Itoa(number)},
		},
		Spec: v1alpha1.ExtendedDaemonSetReplicaSetSpec{Template: *rev.template.DeepCopy(), TemplateGeneration: hashOf(k)},
	}
	c.sets[name], c.templateOf[name] = ers, k
	return ers, nil
}

// edsPass mirrors ExtendedDaemonSetReconciler.reconcile: the current
// template's replica set, chooseActive (stepCanary, canaryInput), stepBake.
// A pass that cannot tell the current replica set (a DaemonSet revision
// not recorded yet) changes nothing: Reconcile returns the error, the
// status says ReconcileFailed, and the DaemonSet's status wakes it again.
func (c *Cluster) edsPass() {
	before := c.eds.Status.DeepCopy()
	current, err := c.currentReplicaSet()
	c.specErr, c.edsErr = nil, err
	if err != nil {
		return
	}
	st := &c.eds.Status
	var transition string
	switch {
	case st.ActiveReplicaSet == current.Name || st.ActiveReplicaSet == "":
		st.ActiveReplicaSet, st.Canary = current.Name, nil
	case c.eds.Spec.Strategy.Canary == nil:
		canaryOfCurrent := st.Canary != nil && st.Canary.ReplicaSet == current.Name
		if canaryOfCurrent && st.Canary.Failed {
			token := canary.RetryToken(nil, c.eds.Annotations)
			if !canary.RetryAsked(token, st.LastHandledRetry) {
				break
			}
			st.LastHandledRetry = canary.RetryHandled(token, st.LastHandledRetry)
		}
		st.ActiveReplicaSet, st.Canary = current.Name, nil
	default:
		in := c.canaryInput(current)
		// stepCanary reads its gates' answers into in.Answers: the model's
		// canaries have no webhooks, so none is asked and nothing holds.
		if cs := in.Status; c.eds.Spec.Strategy.Canary.Analysis != nil && cs != nil && cs.ReplicaSet == current.Name && !cs.Failed {
			if readyAt := canary.ReadyAt(cs, in.Ready, in.Now); readyAt != nil {
				in.Analysis = c.analysisOf(cs, readyAt.Time)
			}
		}
		// stepCanary: steps that cannot resolve stall the object, but what
		// the canary step decided is recorded all the same.
		res, err := canary.Step(in)
		transition = res.Transition
		c.requeue(res.RequeueAfter)
		st.LastHandledRetry = res.LastHandledRetry
		if res.Promote {
			st.ActiveReplicaSet, st.Canary = current.Name, nil
		} else {
			st.Canary = res.Status
		}
		// stalling(err): reconcile returns before stepBake, and the
		// status says InvalidSpec.
		c.specErr = err
	}
	if c.specErr == nil {
		c.stepBake()
		// stepDomainGates: the model's canaries have no webhooks, so no
		// gate stands before a domain and status.domainGate stays empty.
		if c.eds.Spec.WorkloadRef != nil && (st.Canary != nil || bakeJudging(c.eds)) {
			// The canary's verdict and a bake's measure the DaemonSet's
			// pods, which no watch of ours sees restart.
			c.requeue(workloadPoll)
		}
	}
	c.sumReplicaSets(current)
	// Model bookkeeping: the template "apply the failed one" comes back to.
	if st.Canary != nil && st.Canary.Failed {
		c.failedTemplate = c.templateOf[st.Canary.ReplicaSet]
	}
	c.afterEDSPass(before, transition)
}

// canaryInput mirrors ExtendedDaemonSetReconciler.canaryInput and
// observeCanary.
func (c *Cluster) canaryInput(current *v1alpha1.ExtendedDaemonSetReplicaSet) canary.Input {
	eds := c.eds
	strategy := canary.Spread(eds)
	in := canary.Input{
		Strategy: strategy, Annotations: eds.Annotations, Status: eds.Status.Canary,
		LastHandledRetry: eds.Status.LastHandledRetry, ReplicaSet: current.Name,
		TemplateHash: current.Spec.TemplateGeneration, ProgressDeadline: progressDeadline, Now: c.now,
	}
	selector := labels.Everything()
	if strategy.NodeSelector != nil {
		if s, err := metav1.LabelSelectorAsSelector(strategy.NodeSelector); err == nil {
			selector = s
		}
	}
	restarts := map[string]int32{}
	for _, pod := range c.podsOf() {
		if pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel] == current.Name {
			in.Pods = append(in.Pods, pod)
			continue
		}
		for _, cs := range pod.Status.ContainerStatuses {
			restarts[placement.TargetNode(pod)] += cs.RestartCount
		}
	}
	fitter := c.fitter(&current.Spec.Template)
	for _, node := range c.nodes {
		if !fitter.Fit(node).ShouldRun {
			continue
		}
		in.Desired++
		if selector.Matches(labels.Set(node.Labels)) {
			in.Candidates = append(in.Candidates, canary.NewCandidate(node, restarts[node.Name]))
		}
	}
	if cs := eds.Status.Canary; cs != nil && cs.ReplicaSet == current.Name {
		in.Ready = availableOnEvery(cs.Nodes, in.Pods, time.Duration(eds.Spec.MinReadySeconds)*time.Second, c.now)
	}
	return in
}

// availableOnEvery mirrors the function of the same name.
func availableOnEvery(nodes []string, pods []*corev1.Pod, minReady time.Duration, now time.Time) bool {
	available := make(map[string]bool, len(nodes))
	for _, pod := range pods {
		node := placement.TargetNode(pod)
		if p := rolloutPod(pod, node, true); p.Available(minReady, now) {
			available[node] = true
		}
	}
	for _, node := range nodes {
		if !available[node] {
			return false
		}
	}
	return len(nodes) > 0
}

func topologyKey(eds *v1alpha1.ExtendedDaemonSet) string {
	if t := eds.Spec.Strategy.RollingUpdate.Topology; t != nil {
		return t.Key
	}
	return ""
}

func domainOf(node *corev1.Node, key string) string {
	if key == "" {
		return ""
	}
	if v, ok := node.Labels[key]; ok {
		return v
	}
	return rollout.NoDomain
}

// analysisOf stands for ExtendedDaemonSetReconciler.analyze: the phase
// the sequence's verdicts give the canary instance cs, or a pass
// defaultVerdictDelay after its pods were ready when nobody spoke.
func (c *Cluster) analysisOf(cs *v1alpha1.CanaryStatus, readyAt time.Time) *v1alpha1.AnalysisStatus {
	inst := c.instanceOf(cs)
	phase := v1alpha1.AnalysisRunning
	if inst == nil {
		return &v1alpha1.AnalysisStatus{Phase: phase}
	}
	if len(inst.verdicts) == 0 && !c.now.Before(readyAt.Add(defaultVerdictDelay)) {
		phase = v1alpha1.AnalysisSuccessful
	}
	var latest time.Time
	for _, v := range inst.verdicts {
		if !v.at.After(c.now) && !v.at.Before(latest) {
			phase, latest = v.phase, v.at
		}
	}
	if phase == v1alpha1.AnalysisSuccessful {
		inst.analysisPassed = true
	}
	// The controller measures on a schedule it requeues for: the model's
	// next conclusion is when it looks again.
	if len(inst.verdicts) == 0 && c.now.Before(readyAt.Add(defaultVerdictDelay)) {
		c.requeue(readyAt.Add(defaultVerdictDelay).Sub(c.now))
	}
	for _, v := range inst.verdicts {
		if v.at.After(c.now) {
			c.requeue(v.at.Sub(c.now))
		}
	}
	return &v1alpha1.AnalysisStatus{Phase: phase, Message: "model verdict " + string(phase)}
}

// stepBake mirrors ExtendedDaemonSetReconciler.stepBake; the bake's
// analysis always passes.
func (c *Cluster) stepBake() {
	eds := c.eds
	st := &eds.Status
	spec := bake.AnalysisOf(eds)
	active := c.sets[st.ActiveReplicaSet]
	domains := rolloutDomains(active)
	in := bake.Input{Analysis: spec, ReplicaSet: st.ActiveReplicaSet, Domains: domains, Status: st.Bake,
		LastHandledRetry: st.LastHandledRetry, Now: c.now}
	if st.Canary == nil {
		in.RetryToken = canary.RetryToken(eds.Spec.Strategy.Canary, eds.Annotations)
	}
	d := bake.Step(in)
	st.LastHandledRetry = d.LastHandledRetry
	if d.Measure {
		b := d.Status
		b.Analysis = &v1alpha1.AnalysisStatus{Phase: v1alpha1.AnalysisSuccessful}
		bakingSince := b.StartedAt.Time
		if i := slices.IndexFunc(domains, func(s v1alpha1.DomainStatus) bool { return s.Name == b.Domain }); i >= 0 && domains[i].BakingSince != nil {
			bakingSince = domains[i].BakingSince.Time
		}
		c.requeue(bake.Settle(b, bakingSince, bakeTimeOf(eds), c.now))
	}
	st.Bake = d.Status
	st.Domains = nil
	if active != nil {
		st.Domains = bake.Verdicts(active.Status.Domains, st.Bake)
	}
	_, untilMessage := bake.Message(st.Domains, st.Bake, bakeTimeOf(eds), c.now)
	c.requeue(untilMessage)
}

// rolloutDomains mirrors the function of the same name.
func rolloutDomains(active *v1alpha1.ExtendedDaemonSetReplicaSet) []v1alpha1.DomainStatus {
	if active == nil || active.Status.Status != v1alpha1.ReplicaSetActive || active.Status.ObservedGeneration != active.Generation {
		return nil
	}
	return active.Status.Domains
}

func bakeTimeOf(eds *v1alpha1.ExtendedDaemonSet) time.Duration {
	if t := eds.Spec.Strategy.RollingUpdate.Topology; t != nil && t.DomainBakeTime != nil {
		return t.DomainBakeTime.Duration
	}
	return 0
}

// returnsAtOnce mirrors the function of the same name in
// replicaset_roles.go.
func returnsAtOnce(eds *v1alpha1.ExtendedDaemonSet, ers *v1alpha1.ExtendedDaemonSetReplicaSet) func(*corev1.Pod) bool {
	if canary.RoleOf(eds, ers.Name) != v1alpha1.ReplicaSetActive {
		return nil
	}
	failed := ""
	if cs := eds.Status.Canary; cs != nil && cs.Failed {
		failed = cs.ReplicaSet
	}
	var since time.Time
	if ers.Status.ActiveSince != nil {
		since = ers.Status.ActiveSince.Time
	}
	return func(pod *corev1.Pod) bool {
		switch rs := pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel]; rs {
		case "", ers.Name:
			return false
		case failed:
			return true
		default:
			return !since.IsZero() && pod.CreationTimestamp.After(since)
		}
	}
}

// responsibleFor mirrors the function of the same name in
// replicaset_roles.go.
func responsibleFor(eds *v1alpha1.ExtendedDaemonSet, role v1alpha1.ReplicaSetRole) func(node string) bool {
	onCanary := map[string]bool{}
	if cs := canary.Running(eds); cs != nil {
		for _, n := range cs.Nodes {
			onCanary[n] = true
		}
	}
	switch role {
	case v1alpha1.ReplicaSetActive:
		return func(node string) bool { return !onCanary[node] }
	case v1alpha1.ReplicaSetCanary:
		return func(node string) bool { return onCanary[node] }
	default:
		return func(string) bool { return false }
	}
}

// observation mirrors the one of replicaset_observe.go, with what the
// model's status needs.
type observation struct {
	role             v1alpha1.ReplicaSetRole
	input            rollout.Input
	pods             map[string]*corev1.Pod
	specErr          error
	migrating        int
	migrationWaiting string
	// workload: the pods are the DaemonSet's, which creates them;
	// workloadWaiting says why this replica set replaces none.
	workload        bool
	workloadWaiting string
	// template is what new pods are created from.
	template     *corev1.PodTemplateSpec
	unresponsive map[string]bool
	topologyKey  string
	// returning picks, for the active replica set, the pods it takes back
	// at once (returnsAtOnce); nil for the other roles.
	returning func(*corev1.Pod) bool
}

// observe mirrors ReplicaSetReconciler.observe.
func (c *Cluster) observe(ers *v1alpha1.ExtendedDaemonSetReplicaSet) *observation {
	eds := c.eds
	obs := &observation{
		role:         canary.RoleOf(eds, ers.Name),
		input:        rollout.Input{Pods: map[string][]rollout.Pod{}, Now: c.now},
		pods:         map[string]*corev1.Pod{},
		unresponsive: map[string]bool{},
		topologyKey:  topologyKey(eds),
	}
	obs.returning = returnsAtOnce(eds, ers)
	responsible := responsibleFor(eds, obs.role)
	for _, node := range c.nodes {
		if placement.Unresponsive(node, c.now, placement.DefaultUnresponsiveGrace) {
			obs.unresponsive[node.Name] = true
		}
	}
	obs.addNodes(c.nodes, c.fitter(&ers.Spec.Template), responsible)
	pods, work := c.rsPodsOf(ers)
	var old handover
	if obs.role != v1alpha1.ReplicaSetUnknown {
		// Every replica set that places pods, the canary's too, takes the
		// old DaemonSet's pods for the old pods of its nodes.
		old = c.oldDaemonSetPods()
		pods = append(pods, old.pods...)
		obs.migrating, obs.migrationWaiting = len(old.pods), old.waiting
	}
	obs.addPods(pods, c.nodes, ers.Name, responsible)
	if obs.role == v1alpha1.ReplicaSetUnknown {
		obs.input.Params.Frozen = true
		return obs
	}
	obs.template = work.templateOr(&eds.Spec.Template)
	obs.input.Params, obs.specErr = rolloutParams(eds, ers, c.fitting(obs.template), c.now)
	obs.specErr = errors.Join(obs.specErr, old.refused, work.err())
	obs.workload, obs.workloadWaiting = work != nil, work.waiting()
	if obs.role == v1alpha1.ReplicaSetActive {
		judgeBakes(obs.input.Params.Topology, eds, ers.Name)
		// gateDomains: without webhooks, no gate holds a domain.
	}
	if obs.role == v1alpha1.ReplicaSetCanary {
		obs.input.Params.Paused = false
		if t := obs.input.Params.Topology; t != nil {
			parallel := *t
			parallel.Sequential, parallel.BakeTime = false, 0
			obs.input.Params.Topology = &parallel
		}
	}
	obs.input.Elsewhere = c.spentElsewhere(obs, pods)
	if obs.specErr != nil || obs.migrationWaiting != "" || obs.workloadWaiting != "" {
		obs.input.Params.Frozen = true
	}
	return obs
}

func (o *observation) addNodes(nodes []*corev1.Node, fitter *placement.Fitter, responsible func(string) bool) {
	for _, node := range nodes {
		if !responsible(node.Name) {
			continue
		}
		fit := fitter.Fit(node)
		o.input.Nodes = append(o.input.Nodes, rollout.Node{
			Name: node.Name, ShouldRun: fit.ShouldRun, ShouldContinueRunning: fit.ShouldContinueRunning,
			Unresponsive: o.unresponsive[node.Name], Maintenance: placement.InMaintenance(node), Domain: domainOf(node, o.topologyKey),
		})
	}
}

func (o *observation) addPods(pods []*corev1.Pod, nodes []*corev1.Node, ers string, responsible func(string) bool) {
	exists := make(map[string]bool, len(nodes))
	down := map[string]bool{}
	for _, node := range nodes {
		exists[node.Name] = true
		down[node.Name] = !placement.NodeReadiness(node).Ready()
	}
	extra := map[string]bool{}
	for _, pod := range pods {
		node := placement.TargetNode(pod)
		mine := pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel] == ers
		switch {
		case node == "":
			continue
		case o.role == v1alpha1.ReplicaSetUnknown:
			if !mine {
				continue
			}
			if !extra[node] {
				extra[node] = true
				o.input.Nodes = append(o.input.Nodes, rollout.Node{Name: node, ShouldContinueRunning: true})
			}
		case exists[node]:
			if !responsible(node) {
				continue
			}
		case o.role == v1alpha1.ReplicaSetActive:
			if !extra[node] {
				extra[node] = true
				o.input.Nodes = append(o.input.Nodes, rollout.Node{Name: node})
			}
		default:
			continue
		}
		p := rolloutPod(pod, node, mine)
		p.Returning = o.returning != nil && o.returning(pod)
		p.Unschedulable = p.Unschedulable && !down[node]
		o.input.Pods[node] = append(o.input.Pods[node], p)
		o.pods[pod.Name] = pod
	}
}

// rolloutPod mirrors the function of the same name, without what only
// an update in place sets (Updating, Draining, GateClosed, the in-place
// ready time): the model has none.
func rolloutPod(pod *corev1.Pod, node string, mine bool) rollout.Pod {
	return rollout.Pod{
		Name:          pod.Name,
		Node:          node,
		New:           mine,
		Failed:        pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded,
		Terminating:   pod.DeletionTimestamp != nil,
		Unschedulable: placement.Unschedulable(pod),
		ReadySince:    readySince(pod),
		CreatedAt:     pod.CreationTimestamp.Time,
	}
}

func readySince(pod *corev1.Pod) time.Time { return placement.ReadySince(pod).Time }

// rolloutParams mirrors the function of the same name (integers only, as
// the model's spec has).
func rolloutParams(eds *v1alpha1.ExtendedDaemonSet, ers *v1alpha1.ExtendedDaemonSetReplicaSet, desired int, now time.Time) (rollout.Params, error) {
	ru := eds.Spec.Strategy.RollingUpdate
	p := rollout.Params{
		MinReady:               time.Duration(eds.Spec.MinReadySeconds) * time.Second,
		MaxParallelPodCreation: 250,
		Paused:                 ru.Paused || eds.Annotations[v1alpha1.RollingUpdatePausedAnnotation] == "true",
		Frozen:                 ru.Frozen || eds.Annotations[v1alpha1.RolloutFrozenAnnotation] == "true",
		StartedAt:              now,
	}
	if ers.Status.ActiveSince != nil {
		p.StartedAt = ers.Status.ActiveSince.Time
	}
	resolve := func(v *intstr.IntOrString, def int) int {
		if v == nil {
			return def
		}
		n, _ := intstr.GetScaledValueFromIntOrPercent(v, desired, true)
		return n
	}
	p.MaxUnavailable = resolve(ru.MaxUnavailable, 1)
	p.MaxSurge = resolve(ru.MaxSurge, 0)
	p.SlowStartIncrease = 1
	p.Topology = topologyParams(ru.Topology)
	var err error
	if p.MaxUnavailable == 0 && p.MaxSurge == 0 && desired > 0 {
		err = fmt.Errorf("maxUnavailable and maxSurge both resolve to 0 for %d nodes", desired)
	}
	return p, err
}

// topologyParams mirrors the function of the same name (integers only).
func topologyParams(t *v1alpha1.RollingUpdateTopology) *rollout.Topology {
	if t == nil {
		return nil
	}
	out := &rollout.Topology{MaxUnavailable: 1, Sequential: t.Order != v1alpha1.TopologyParallel}
	if v := t.MaxUnavailablePerDomain; v != nil {
		out.MaxUnavailable = v.IntValue()
	}
	if t.DomainBakeTime != nil && out.Sequential {
		out.BakeTime = t.DomainBakeTime.Duration
	}
	return out
}

// judgeBakes mirrors the function of the same name.
func judgeBakes(t *rollout.Topology, eds *v1alpha1.ExtendedDaemonSet, ers string) {
	if t == nil || t.BakeTime <= 0 || bake.AnalysisOf(eds) == nil {
		return
	}
	t.JudgedBakes, t.PassedThrough = true, bake.PassedThrough(eds.Status.Bake, ers)
}

// fitting mirrors the count of fitting nodes of view.restate.
func (c *Cluster) fitting(template *corev1.PodTemplateSpec) int {
	n, fitter := 0, c.fitter(template)
	for _, node := range c.nodes {
		if fitter.Fit(node).ShouldRun {
			n++
		}
	}
	return n
}

// spentElsewhere mirrors ReplicaSetReconciler.spentElsewhere and spentBy.
func (c *Cluster) spentElsewhere(obs *observation, pods []*corev1.Pod) rollout.Spent {
	eds := c.eds
	cs := canary.Running(eds)
	if cs == nil {
		return rollout.Spent{}
	}
	other := &observation{
		role:         v1alpha1.ReplicaSetCanary,
		input:        rollout.Input{Pods: map[string][]rollout.Pod{}, Now: obs.input.Now, Params: obs.input.Params},
		pods:         map[string]*corev1.Pod{},
		unresponsive: obs.unresponsive,
		topologyKey:  obs.topologyKey,
	}
	name := cs.ReplicaSet
	if obs.role == v1alpha1.ReplicaSetCanary {
		other.role, name = v1alpha1.ReplicaSetActive, eds.Status.ActiveReplicaSet
	} else {
		other.input.Elsewhere.Excused = obs.input.Params.MaxPodSchedulerFailure
	}
	tmpl := obs.template
	if ers := c.sets[name]; ers != nil {
		tmpl = &ers.Spec.Template
	}
	responsible := responsibleFor(eds, other.role)
	other.addNodes(c.nodes, c.fitter(tmpl), responsible)
	other.addPods(pods, c.nodes, name, responsible)
	other.input.Params.Frozen = true
	return rollout.Compute(other.input).Counts.Spent()
}

// handover mirrors the type of the same name in replicaset_handover.go.
type handover struct {
	pods    []*corev1.Pod
	waiting string
	refused error
}

// oldDaemonSetPods mirrors ReplicaSetReconciler.oldDaemonSetPods, the
// list call included: the API server returns the pods the listed selector
// matches.
func (c *Cluster) oldDaemonSetPods() handover {
	if c.eds.Annotations[v1alpha1.OldDaemonSetAnnotation] == "" {
		return handover{}
	}
	var listed, orphans labels.Selector
	var err error
	if c.ds != nil {
		selector := &metav1.LabelSelector{MatchLabels: c.ds.selector}
		if listed, err = metav1.LabelSelectorAsSelector(selector); err != nil {
			return handover{}
		}
		// The DaemonSet's template labels are its selector's, as the
		// model's DaemonSet pods carry.
		if orphans, err = orphanSelector(selector, c.ds.selector); err != nil {
			return handover{refused: err}
		}
	} else {
		if orphans, err = orphanSelector(c.eds.Spec.Selector.AsMeta(), c.eds.Spec.Template.Labels); err != nil {
			return handover{refused: err}
		}
		listed = orphans
	}
	var h handover
	for _, pod := range c.sortedPods() {
		if !listed.Matches(labels.Set(pod.Labels)) {
			continue
		}
		if _, ours := pod.Labels[v1alpha1.ExtendedDaemonSetNameLabel]; ours {
			continue
		}
		ref := metav1.GetControllerOf(pod)
		if ref == nil && orphans.Matches(labels.Set(pod.Labels)) || ref != nil && c.ds != nil && ref.UID == c.ds.uid {
			h.pods = append(h.pods, pod)
		}
	}
	if c.ds != nil && len(h.pods) > 0 {
		h.waiting = "DaemonSet " + oldDSName + " still manages its pods"
	}
	return h
}

// orphanSelector mirrors the function of the same name.
func orphanSelector(selector *metav1.LabelSelector, templateLabels map[string]string) (labels.Selector, error) {
	narrowed := &metav1.LabelSelector{}
	if selector != nil {
		narrowed = selector.DeepCopy()
	}
	if !namesALabelValue(narrowed) {
		if len(templateLabels) == 0 {
			return nil, errors.New("neither the selector nor the pod template labels name a label value")
		}
		narrowed.MatchLabels = maps.Clone(templateLabels)
	}
	return metav1.LabelSelectorAsSelector(narrowed)
}

// namesALabelValue mirrors the function of the same name.
func namesALabelValue(selector *metav1.LabelSelector) bool {
	if len(selector.MatchLabels) > 0 {
		return true
	}
	for _, r := range selector.MatchExpressions {
		if r.Operator == metav1.LabelSelectorOpIn {
			return true
		}
	}
	return false
}

// rsPass mirrors ReplicaSetReconciler.Reconcile: observe, plan, act,
// status.
func (c *Cluster) rsPass(ers *v1alpha1.ExtendedDaemonSetReplicaSet) {
	obs := c.observe(ers)
	plan := rollout.Compute(obs.input)
	c.checkIncremental(ers.Name, obs.input, plan)
	c.act(ers, obs, plan)
	c.setReplicaSetStatus(ers, obs, plan)
	c.requeue(plan.RequeueAfter)
	if obs.migrating > 0 {
		c.requeue(migrationPoll)
	}
	if obs.workload && obs.role != v1alpha1.ReplicaSetUnknown {
		c.requeue(workloadPoll)
	}
	c.requeue(c.untilUnresponsive(obs))
}

// untilUnresponsive mirrors view.untilUnresponsive: the view's nodes not
// Ready are among the input's nodes.
func (c *Cluster) untilUnresponsive(obs *observation) time.Duration {
	var wait time.Duration
	for _, n := range obs.input.Nodes {
		if node := c.node(n.Name); node != nil && !n.Unresponsive {
			if d := placement.UnresponsiveIn(node, c.now, placement.DefaultUnresponsiveGrace); d > 0 && (wait == 0 || d < wait) {
				wait = d
			}
		}
	}
	return wait
}

// migrationPoll mirrors the constant of the same name.
const migrationPoll = 2 * time.Second

// act carries the plan out at once (the model has no API errors nor cache
// lag), noting for the promises what each write took down.
func (c *Cluster) act(ers *v1alpha1.ExtendedDaemonSetReplicaSet, obs *observation, plan rollout.Plan) {
	for _, d := range plan.Delete {
		pod := c.pods[d.Pod]
		if pod == nil || pod.DeletionTimestamp != nil {
			continue
		}
		if c.trace != nil {
			c.trace("%s deletes %s (%s)", ers.Name, d.Pod, d.Reason)
		}
		c.deleting(pod, string(d.Reason))
		pod.DeletionTimestamp = &metav1.Time{Time: c.now}
	}
	create := plan.Create
	if obs.workload {
		// ReplicaSetReconciler.act: the DaemonSet creates the pods, at
		// its template, on every node that lacks one.
		create = nil
	}
	for _, node := range create {
		if c.trace != nil {
			c.trace("%s creates a pod on %s", ers.Name, node)
		}
		c.creating(node)
		name := fmt.Sprintf("%s-%s-%d", ers.Name, node, c.serial)
		c.serial++
		pod := placement.NewPod(&ers.Spec.Template, node, map[string]string{
			v1alpha1.ExtendedDaemonSetNameLabel: edsName, v1alpha1.ExtendedDaemonSetReplicaSetNameLabel: ers.Name,
		})
		pod.Namespace, pod.Name, pod.CreationTimestamp = namespace, name, metav1.Time{Time: c.now}
		pod.Spec.NodeName = node
		pod.Status.Phase = corev1.PodPending
		c.pods[name] = pod
		if c.hold {
			c.held[name] = true
		}
	}
	c.writes += len(plan.Delete) + len(create)
}

// progress mirrors the phase and reason of conditions.go's progress.
type progress struct {
	phase  string
	reason string
}

const (
	phaseProgressing = "Progressing"
	phaseDone        = "Done"
	phaseStalled     = "Stalled"
	phaseIdle        = "Idle"
)

// waitsForProgress mirrors the method of the same name.
func (p progress) waitsForProgress() bool {
	if p.phase != phaseProgressing {
		return false
	}
	switch p.reason {
	case v1alpha1.ReasonRollingUpdate, v1alpha1.ReasonProgressing, v1alpha1.ReasonReconcileFailed:
		return true
	}
	return false
}

// setReplicaSetStatus mirrors the function of the same name, with
// markProgress and progressed
// (replicaset_deadline.go), and replicaSetProgress.
func (c *Cluster) setReplicaSetStatus(ers *v1alpha1.ExtendedDaemonSetReplicaSet, obs *observation, plan rollout.Plan) {
	counts := plan.Counts
	st := &ers.Status
	before := *st
	switch {
	case obs.role != v1alpha1.ReplicaSetActive:
		st.ActiveSince = nil
	case st.Status != v1alpha1.ReplicaSetActive || st.ActiveSince == nil:
		st.ActiveSince = &metav1.Time{Time: c.now}
	}
	st.Status = obs.role
	st.ObservedGeneration = ers.Generation
	st.Desired, st.Current, st.Ready = int32(counts.Desired), int32(counts.Running.Current), int32(counts.Running.Ready)
	st.Available, st.UpToDate, st.Unschedulable = int32(counts.Running.Available), int32(counts.UpToDate), int32(counts.Unschedulable)
	st.IgnoredUnresponsiveNodes, st.NodesInMaintenance = int32(counts.IgnoredUnresponsive), int32(counts.InMaintenance)
	st.Domains = nil
	if obs.role == v1alpha1.ReplicaSetActive {
		st.Domains = domainStatuses(counts.Domains)
	}
	p := replicaSetProgress(obs, counts)
	markProgress(&before, st, counts, p, c.now)
	if p.waitsForProgress() {
		if stalledAt := st.LastProgressTime.Add(progressDeadline); c.now.Before(stalledAt) {
			c.requeue(stalledAt.Sub(c.now) + time.Second)
		} else {
			p = progress{phase: phaseStalled, reason: v1alpha1.ReasonProgressDeadlineExceeded}
		}
	}
	c.progress[ers.Name] = p
}

// markProgress mirrors the function of the same name.
func markProgress(before, st *v1alpha1.ExtendedDaemonSetReplicaSetStatus, cnt rollout.Counts, p progress, now time.Time) {
	stand := v1alpha1.ProgressMark{UpToDate: int32(cnt.UpToDate), Old: int32(cnt.Old)}
	waiting := p.waitsForProgress()
	held := !waiting && p.phase == phaseProgressing
	kept := before.ProgressMark != nil && before.LastProgressTime != nil && before.Status == st.Status
	switch {
	case !waiting && (!held || !kept):
		st.ProgressMark = nil
		return
	case !kept:
		st.ProgressMark, st.LastProgressTime = &stand, &metav1.Time{Time: now}
		return
	}
	mark, moved := progressed(*before.ProgressMark, before.Desired, stand, st.Desired)
	mark.HeldSince = before.ProgressMark.HeldSince
	last := before.LastProgressTime.Time
	switch {
	case moved:
		last, mark.HeldSince = now, nil
	case waiting && mark.HeldSince != nil:
		last, mark.HeldSince = last.Add(now.Sub(mark.HeldSince.Time)), nil
	}
	if held && mark.HeldSince == nil {
		mark.HeldSince = &metav1.Time{Time: now}
	}
	st.ProgressMark, st.LastProgressTime = &mark, &metav1.Time{Time: last}
}

// progressed mirrors the function of the same name.
func progressed(mark v1alpha1.ProgressMark, desiredBefore int32, stand v1alpha1.ProgressMark, desired int32) (v1alpha1.ProgressMark, bool) {
	if stand.UpToDate > mark.UpToDate || stand.Old < mark.Old {
		return stand, true
	}
	if desired < desiredBefore {
		mark.UpToDate = min(mark.UpToDate, stand.UpToDate)
	}
	mark.Old = max(mark.Old, stand.Old)
	return mark, false
}

func replicaSetProgress(obs *observation, cnt rollout.Counts) progress {
	params := obs.input.Params
	switch {
	case obs.specErr != nil:
		return progress{phase: phaseStalled, reason: v1alpha1.ReasonInvalidSpec}
	case obs.role == v1alpha1.ReplicaSetUnknown:
		return progress{phase: phaseIdle, reason: v1alpha1.ReasonInactive}
	}
	old := cnt.Old - cnt.KeptOld
	rolledOut := cnt.UpToDate == cnt.Desired && old == 0 && cnt.Misplaced == 0 && cnt.Current-cnt.KeptNew == cnt.Desired
	switch {
	case rolledOut:
		return progress{phase: phaseDone, reason: v1alpha1.ReasonRolledOut}
	case obs.migrationWaiting != "":
		return progress{phase: phaseProgressing, reason: v1alpha1.ReasonWaitingForOldDaemonSet}
	case obs.workloadWaiting != "":
		return progress{phase: phaseProgressing, reason: v1alpha1.ReasonWaitingForWorkload}
	case params.Frozen:
		return progress{phase: phaseProgressing, reason: v1alpha1.ReasonRolloutFrozen}
	case old > 0 && params.Paused:
		return progress{phase: phaseProgressing, reason: v1alpha1.ReasonRollingUpdatePaused}
	case old > 0 && baking(cnt.Domains) != "":
		return progress{phase: phaseProgressing, reason: v1alpha1.ReasonDomainBaking}
	case old > 0 && rollout.WaitingAtGates(cnt.Domains) != "":
		return progress{phase: phaseProgressing, reason: v1alpha1.ReasonWaitingForGate}
	case old > 0:
		return progress{phase: phaseProgressing, reason: v1alpha1.ReasonRollingUpdate}
	default:
		return progress{phase: phaseProgressing, reason: v1alpha1.ReasonProgressing}
	}
}

func baking(domains []rollout.DomainCounts) string {
	for _, d := range domains {
		if d.State == rollout.DomainBaking {
			return d.Name
		}
	}
	return ""
}

// domainStatuses mirrors the function of the same name, without its bound.
func domainStatuses(domains []rollout.DomainCounts) []v1alpha1.DomainStatus {
	if len(domains) == 0 {
		return nil
	}
	out := make([]v1alpha1.DomainStatus, len(domains))
	for i, d := range domains {
		out[i] = v1alpha1.DomainStatus{
			Name: d.Name, State: v1alpha1.DomainState(d.State),
			Desired: int32(d.Desired), UpToDate: int32(d.UpToDate), Unavailable: int32(d.Unavailable),
		}
		if !d.BakingSince.IsZero() {
			out[i].BakingSince = &metav1.Time{Time: d.BakingSince}
		}
	}
	return out
}

// describe tells where the rollout stands, for a failure message.
func (c *Cluster) describe() string {
	var b strings.Builder
	st := c.eds.Status
	if ds := c.workload; ds != nil {
		fmt.Fprintf(&b, "DaemonSet template %d (revision %d recorded), active %s", ds.template, ds.revision, st.ActiveReplicaSet)
	} else {
		fmt.Fprintf(&b, "template %d, active %s", templateNumber(&c.eds.Spec.Template), st.ActiveReplicaSet)
	}
	if cs := st.Canary; cs != nil {
		fmt.Fprintf(&b, ", canary %s (step %d, nodes %v, failed %v, paused %v, reason %q)", cs.ReplicaSet, cs.Step, cs.Nodes, cs.Failed, cs.Paused, cs.Reason)
	}
	if c.specErr != nil {
		fmt.Fprintf(&b, ", canary error %q", c.specErr)
	}
	if c.edsErr != nil {
		fmt.Fprintf(&b, ", pass error %q", c.edsErr)
	}
	for _, ers := range c.sortedSets() {
		if p, ok := c.progress[ers.Name]; ok && p.phase != phaseIdle {
			fmt.Fprintf(&b, "; %s %s/%s (%d/%d up to date)", ers.Name, p.phase, p.reason, ers.Status.UpToDate, ers.Status.Desired)
		}
	}
	var nodes []string
	for _, n := range c.nodes {
		s := n.Name + ":" + n.Labels[zoneLabel]
		if !nodeReady(n) {
			s += ":NotReady"
		}
		if why := placement.Maintenance(n); why != "" {
			s += ":" + why
		}
		nodes = append(nodes, s)
	}
	fmt.Fprintf(&b, "; nodes %s", strings.Join(nodes, " "))
	return b.String()
}

// fitter is placement.NewFitter, once per template: the model's templates
// differ by image only, and never change under a number.
func (c *Cluster) fitter(template *corev1.PodTemplateSpec) *placement.Fitter {
	k := templateNumber(template)
	if f, ok := c.fitters[k]; ok {
		return f
	}
	f := placement.NewFitter(template)
	c.fitters[k] = f
	return f
}

// sumReplicaSets mirrors the function of the same name in
// extendeddaemonset_status.go.
func (c *Cluster) sumReplicaSets(current *v1alpha1.ExtendedDaemonSetReplicaSet) {
	st := &c.eds.Status
	st.Desired, st.Current, st.Ready, st.Available, st.UpToDate, st.IgnoredUnresponsiveNodes, st.NodesInMaintenance = 0, 0, 0, 0, 0, 0, 0
	for _, s := range c.sortedSets() {
		role := canary.RoleOf(c.eds, s.Name)
		if role != v1alpha1.ReplicaSetActive && role != v1alpha1.ReplicaSetCanary {
			continue
		}
		st.Desired += s.Status.Desired
		st.IgnoredUnresponsiveNodes += s.Status.IgnoredUnresponsiveNodes
		st.NodesInMaintenance += s.Status.NodesInMaintenance
		st.Current += s.Status.Current
		st.Ready += s.Status.Ready
		st.Available += s.Status.Available
		if s.Name == current.Name {
			st.UpToDate = s.Status.UpToDate
		}
	}
}
