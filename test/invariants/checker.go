package invariants

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// Rule names a promise the controller makes.
type Rule string

// The rules, one per promise.
const (
	// Unavailable: more nodes without an available agent than maxUnavailable
	// allows, with at least one of them taken down by the rollout.
	Unavailable Rule = "Unavailable"
	// TwoPods: two pods of one ExtendedDaemonSet on a node while maxSurge
	// allows none, three on a node, or more surging nodes than maxSurge.
	TwoPods Rule = "TwoPods"
	// EarlyPromotion: a canary instance (a replica set from one start; a
	// template applied again or a retry starts another) promoted, or moved
	// on from a step, before it ran its duration (or its step's) since its
	// own start, or without its analysis seen pass since then, and no
	// person validated that instance (or skipped that step) since it
	// started; or a replica set promoted with no canary of it running; or,
	// unless a person validated it, a canary promoted while one of its
	// nodes had no available canary pod on a Ready node.
	EarlyPromotion Rule = "EarlyPromotion"
	// SpecWritten: the controller wrote an ExtendedDaemonSet's spec.
	SpecWritten Rule = "SpecWritten"
	// FailedTemplate: a pod of a failed canary template outside the canary's
	// nodes.
	FailedTemplate Rule = "FailedTemplate"
	// CanaryInMaintenance: a canary pod created on a node that was in
	// maintenance (placement.Maintenance) since before the controller
	// could have seen it (ReactionTime).
	CanaryInMaintenance Rule = "CanaryInMaintenance"
)

// Violation is one broken promise.
type Violation struct {
	Rule    Rule
	At      time.Time
	Message string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s %s: %s", v.At.Format("15:04:05.000"), v.Rule, v.Message)
}

// DefaultGrace is how long a suspected breach of the budget waits for the
// watches of other kinds to catch up before it counts: a pod deleted
// because its node went away or stopped matching may be seen before the
// node's change, which comes through another watch.
const DefaultGrace = 2 * time.Second

// DefaultReactionTime is how long the controller is given to see an agent
// fail on its own before taking another one down counts against it: its
// view of the cluster lags the API server's by the watch's delay.
const DefaultReactionTime = time.Second

// Checker applies the rules to the objects it is shown, in the order they
// are shown. It is not safe for concurrent use.
type Checker struct {
	// FieldManager is the field manager the controller writes with.
	FieldManager string
	// Grace is how long a suspected breach waits before it counts;
	// DefaultGrace when zero.
	Grace time.Duration
	// ReactionTime is how long after an agent failed on its own the
	// controller is held to know it; DefaultReactionTime when zero.
	ReactionTime time.Duration
	// DeadlineSlack is the reaction delay the Hanging rule allows on top of
	// what the spec does; DefaultDeadlineSlack when zero.
	DeadlineSlack time.Duration
	// Note receives a line for each change worth a timeline entry.
	Note func(at time.Time, line string)

	nodes map[string]*corev1.Node
	// inMaintenance is when each node in maintenance was first seen so.
	inMaintenance map[string]time.Time
	sets          map[string]*setState
	// daemonSets are the DaemonSets of the namespace, by name: an
	// ExtendedDaemonSet whose workloadRef names one runs its pods, at its
	// template.
	daemonSets map[string]*appsv1.DaemonSet
	pods       map[types.UID]podInfo
	onNode     map[string]map[types.UID]bool
	synced     bool
	created    map[string]int
	// lastAvailable is when each "node/replicaSet" was last seen with an
	// available pod on a Ready node.
	lastAvailable map[string]time.Time
	// promotions wait out the grace before their canary nodes are judged.
	promotions []promotion

	suspects   []suspect
	violations []Violation
	// reported dedupes a breach seen again at every event until it ends.
	reported map[string]bool
}

// setState is what the Checker keeps of one ExtendedDaemonSet.
type setState struct {
	eds *v1alpha1.ExtendedDaemonSet
	// desired are the nodes the template fits and that are Ready, not in
	// maintenance.
	desired map[string]bool
	// inMaintenance are the nodes the template fits and that are Ready,
	// in maintenance: out of the budgets, but among the nodes percentages
	// resolve against, as the controller resolves them.
	inMaintenance map[string]bool
	// available are the desired nodes with an available agent.
	available map[string]bool
	// outages are the desired nodes that lost their available agent, and
	// whether the rollout took it (a pod deleted) or it went unready alone.
	outages map[string]outage
	// instance is the last canary instance seen, kept past its promotion.
	instance *canaryInstance
	// steering holds the values that promote a canary or move it on, with
	// when each was given.
	steering map[steeringSource]given
	// episode is the latest change of template or steering value, until
	// the rollout ends.
	episode *episode
	// failed is when each failed canary replica set was first seen failed,
	// with its nodes.
	failed map[string]failedCanary
	// surging are the nodes with two live pods.
	surging    map[string]bool
	specWriter bool
}

type outage struct {
	since     time.Time
	byRollout bool
}

type failedCanary struct {
	since time.Time
	nodes []string
}

type podInfo struct {
	name, eds, replicaSet, node string
	ready, terminating          bool
	// updating: the pod is being updated in place (an image its
	// containers do not run yet, or its in-place readiness gate closed):
	// the rollout took it down.
	updating bool
	// evicted: the pod is being evicted (its DisruptionTarget condition
	// is True), which is not the rollout's doing.
	evicted   bool
	restarts  int32
	firstSeen time.Time
}

// suspect is a budget breach waiting out the grace period.
type suspect struct {
	eds    string
	at     time.Time
	nodes  []string
	budget int
	// domain is the topology domain whose budget the suspect breaks, empty
	// for the global budget.
	domain string
}

// NewChecker returns a Checker for the controller writing as fieldManager.
func NewChecker(fieldManager string) *Checker {
	return &Checker{
		FieldManager: fieldManager,
		nodes:        map[string]*corev1.Node{}, inMaintenance: map[string]time.Time{}, sets: map[string]*setState{}, daemonSets: map[string]*appsv1.DaemonSet{},
		pods: map[types.UID]podInfo{}, onNode: map[string]map[types.UID]bool{}, created: map[string]int{},
		lastAvailable: map[string]time.Time{}, reported: map[string]bool{},
	}
}

// Synced marks the end of the initial listing: pods seen from now on were
// created while the Checker watched.
func (c *Checker) Synced() { c.synced = true }

// Violations returns the promises broken so far.
func (c *Checker) Violations() []Violation { return slices.Clone(c.violations) }

// PodsCreated counts the pods created while the Checker watched, keyed
// "node/replicaSet".
func (c *Checker) PodsCreated() map[string]int {
	out := make(map[string]int, len(c.created))
	for k, v := range c.created {
		out[k] = v
	}
	return out
}

func (c *Checker) note(at time.Time, format string, args ...any) {
	if c.Note != nil {
		c.Note(at, fmt.Sprintf(format, args...))
	}
}

func (c *Checker) violate(at time.Time, rule Rule, format string, args ...any) {
	v := Violation{Rule: rule, At: at, Message: fmt.Sprintf(format, args...)}
	key := string(rule) + v.Message
	if c.reported[key] {
		return
	}
	c.reported[key] = true
	c.violations = append(c.violations, v)
	c.note(at, "VIOLATION %s: %s", rule, v.Message)
}

func (c *Checker) reactionTime() time.Duration {
	if c.ReactionTime > 0 {
		return c.ReactionTime
	}
	return DefaultReactionTime
}

func (c *Checker) grace() time.Duration {
	if c.Grace > 0 {
		return c.Grace
	}
	return DefaultGrace
}

// Node records a node, or its deletion.
func (c *Checker) Node(node *corev1.Node, deleted bool, now time.Time) {
	if prev, known := c.nodes[node.Name]; deleted || !known || nodeShape(prev) != nodeShape(node) {
		c.moved("", "", now)
	}
	c.seeAvailable(node.Name, now)
	switch _, was := c.inMaintenance[node.Name]; {
	case deleted || !placement.InMaintenance(node):
		delete(c.inMaintenance, node.Name)
	case !was:
		c.inMaintenance[node.Name] = now
		c.note(now, "node %s in maintenance: %s", node.Name, placement.Maintenance(node))
	}
	if deleted {
		delete(c.nodes, node.Name)
		c.note(now, "node %s deleted", node.Name)
	} else {
		if _, known := c.nodes[node.Name]; !known && c.synced {
			c.note(now, "node %s added", node.Name)
		}
		c.nodes[node.Name] = node
	}
	for _, s := range c.sets {
		c.place(s, node.Name)
	}
}

// ExtendedDaemonSet records an ExtendedDaemonSet, or its deletion.
func (c *Checker) ExtendedDaemonSet(eds *v1alpha1.ExtendedDaemonSet, deleted bool, now time.Time) {
	if deleted || eds.DeletionTimestamp != nil {
		// Its pods go with it, all at once: no budget holds any more.
		if _, known := c.sets[eds.Name]; known {
			c.note(now, "eds %s deleted", eds.Name)
		}
		delete(c.sets, eds.Name)
		return
	}
	s, known := c.sets[eds.Name]
	if !known {
		s = &setState{desired: map[string]bool{}, inMaintenance: map[string]bool{}, available: map[string]bool{}, outages: map[string]outage{}, failed: map[string]failedCanary{},
			surging: map[string]bool{}, steering: map[steeringSource]given{}}
		c.sets[eds.Name] = s
	}
	before := s.eds
	s.eds = eds
	c.noteStatus(before, eds, now)
	c.checkSpecWriter(s, now)
	s.observeSteering(now)
	c.checkPromotion(s, before, now)
	c.observeCanary(s, now)
	c.trackFailure(s, now)
	c.trackEpisode(s, before, now)
	if before == nil || before.Generation != eds.Generation {
		for name := range c.nodes {
			c.place(s, name)
		}
		for name := range s.desired {
			if _, ok := c.nodes[name]; !ok {
				c.place(s, name)
			}
		}
	}
}

// DaemonSet records a DaemonSet, or its deletion: the ExtendedDaemonSets
// whose workloadRef names it want its pods where its template fits.
func (c *Checker) DaemonSet(ds *appsv1.DaemonSet, deleted bool, _ time.Time) {
	if deleted {
		delete(c.daemonSets, ds.Name)
	} else {
		c.daemonSets[ds.Name] = ds
	}
	for _, s := range c.sets {
		if ref := s.eds.Spec.WorkloadRef; ref != nil && ref.Name == ds.Name {
			for name := range c.nodes {
				c.place(s, name)
			}
			for name := range s.desired {
				if _, ok := c.nodes[name]; !ok {
					c.place(s, name)
				}
			}
		}
	}
}

// templateOf is the template the pods of s run: its own, or that of the
// DaemonSet its workloadRef names (nil while that is not seen).
func (c *Checker) templateOf(s *setState) *corev1.PodTemplateSpec {
	ref := s.eds.Spec.WorkloadRef
	if ref == nil {
		return &s.eds.Spec.Template
	}
	if ds := c.daemonSets[ref.Name]; ds != nil {
		return &ds.Spec.Template
	}
	return nil
}

// ownerOf names the ExtendedDaemonSet of a pod and its replica set: by
// our labels, or for a pod of a DaemonSet a workloadRef names, by that
// reference and the pod's revision. Empty for any other pod.
func (c *Checker) ownerOf(pod *corev1.Pod) (eds, replicaSet string) {
	if eds := pod.Labels[v1alpha1.ExtendedDaemonSetNameLabel]; eds != "" {
		return eds, pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel]
	}
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != "DaemonSet" {
		return "", ""
	}
	for name, s := range c.sets {
		if w := s.eds.Spec.WorkloadRef; w != nil && w.Name == ref.Name {
			return name, name + "-" + pod.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]
		}
	}
	return "", ""
}

// Pod records a pod, or its deletion. Pods of no ExtendedDaemonSet are
// ignored.
func (c *Checker) Pod(pod *corev1.Pod, deleted bool, now time.Time) {
	eds, replicaSet := c.ownerOf(pod)
	if eds == "" {
		return
	}
	prev, known := c.pods[pod.UID]
	info := podInfo{
		name: pod.Name, eds: eds, replicaSet: replicaSet,
		node: placement.TargetNode(pod), ready: RunningAndReady(pod), terminating: pod.DeletionTimestamp != nil,
		updating: imageChanging(pod) || inPlaceGateClosed(pod), evicted: evicted(pod), restarts: restarts(pod), firstSeen: now,
	}
	if known {
		info.firstSeen = prev.firstSeen
	}
	if known && prev.node != info.node {
		delete(c.onNode[prev.eds+"/"+prev.node], pod.UID)
	}
	c.progress(prev, known, info, deleted, now)
	if known {
		c.seeAvailablePod(prev, now)
	}
	if !deleted {
		c.seeAvailablePod(info, now)
	}
	switch {
	case deleted:
		delete(c.pods, pod.UID)
		delete(c.onNode[eds+"/"+info.node], pod.UID)
		c.note(now, "pod %s on %s (%s) gone", pod.Name, info.node, info.replicaSet)
	default:
		c.pods[pod.UID] = info
		key := eds + "/" + info.node
		if c.onNode[key] == nil {
			c.onNode[key] = map[types.UID]bool{}
		}
		c.onNode[key][pod.UID] = true
		if !known && c.synced {
			c.created[info.node+"/"+info.replicaSet]++
			c.note(now, "pod %s on %s (%s) created", pod.Name, info.node, info.replicaSet)
			c.checkCanaryPlacement(info, now)
		} else if known && (prev.ready != info.ready || prev.terminating != info.terminating || prev.updating != info.updating) {
			c.note(now, "pod %s on %s (%s) ready=%t terminating=%t updating=%t", pod.Name, info.node, info.replicaSet, info.ready, info.terminating, info.updating)
		}
	}
	if s := c.sets[eds]; s != nil && info.node != "" {
		c.settle(s, info.node, now, pod.UID)
		c.checkPerNode(s, info.node, now)
		c.checkFailedPods(s, now)
	}
}

// Tick settles the suspects whose grace has passed.
func (c *Checker) Tick(now time.Time) {
	keep := c.suspects[:0]
	for _, sus := range c.suspects {
		if now.Sub(sus.at) < c.grace() {
			keep = append(keep, sus)
			continue
		}
		c.settleSuspect(sus)
	}
	c.suspects = keep
	for _, s := range c.sets {
		c.checkFailedPods(s, now)
	}
	c.settlePromotions(now, false)
	c.checkDeadlines(now)
}

// Pending is how long until every suspect has had its grace.
func (c *Checker) Pending(now time.Time) time.Duration {
	var wait time.Duration
	for _, sus := range c.suspects {
		wait = max(wait, sus.at.Add(c.grace()).Sub(now))
	}
	for _, p := range c.promotions {
		wait = max(wait, p.at.Add(c.grace()).Sub(now))
	}
	return wait
}

// Flush settles every suspect now, as the watch ends.
func (c *Checker) Flush(now time.Time) {
	for _, sus := range c.suspects {
		c.settleSuspect(sus)
	}
	c.suspects = nil
	c.settlePromotions(now, true)
}

// checkCanaryPlacement judges a pod created at now: a canary pod goes on
// no node in maintenance, unless the node entered it too recently for the
// controller to know.
func (c *Checker) checkCanaryPlacement(p podInfo, now time.Time) {
	s := c.sets[p.eds]
	if s == nil {
		return
	}
	cs := s.eds.Status.Canary
	if cs == nil || cs.ReplicaSet != p.replicaSet || cs.ReplicaSet == s.eds.Status.ActiveReplicaSet {
		return
	}
	since, ok := c.inMaintenance[p.node]
	if !ok || !since.Before(now.Add(-c.reactionTime())) {
		return
	}
	c.violate(now, CanaryInMaintenance, "eds %s: canary pod %s (%s) created on node %s, in maintenance (%s) since %s",
		p.eds, p.name, p.replicaSet, p.node, placement.Maintenance(c.nodes[p.node]), since.Format("15:04:05.000"))
}

// place decides whether node is desired for s, after a change of the node
// or of the template. A node in maintenance is not: its agent counts
// against no budget, as the controller counts it.
func (c *Checker) place(s *setState, name string) {
	node, exists := c.nodes[name]
	template := c.templateOf(s)
	fits := exists && template != nil && nodeReady(node) && placement.NodeFit(template, node).ShouldRun
	want := fits && !placement.InMaintenance(node)
	if fits && !want {
		s.inMaintenance[name] = true
	} else {
		delete(s.inMaintenance, name)
	}
	switch {
	case want && !s.desired[name]:
		s.desired[name] = true
		s.available[name] = c.availableOn(s.eds.Name, name)
	case !want && s.desired[name]:
		delete(s.desired, name)
		delete(s.available, name)
		delete(s.outages, name)
	}
}

// settle updates the availability of node for s after a change of pod.
func (c *Checker) settle(s *setState, node string, now time.Time, changed types.UID) {
	if !s.desired[node] {
		return
	}
	was, is := s.available[node], c.availableOn(s.eds.Name, node)
	s.available[node] = is
	switch {
	case was && !is:
		// The agent that was available is gone, going, or being updated in
		// place: the rollout took it. Still there but unready: it failed
		// alone. Evicted: someone else took it.
		p, ok := c.pods[changed]
		byRollout := !ok || (!p.evicted && (p.terminating || p.updating || !c.hasLivePod(s.eds.Name, node)))
		s.outages[node] = outage{since: now, byRollout: byRollout}
		if byRollout {
			c.checkBudget(s, node, now)
		}
	case is:
		delete(s.outages, node)
	}
}

// podsOn returns the pods of eds on node.
func (c *Checker) podsOn(eds, node string) []podInfo {
	var out []podInfo
	for uid := range c.onNode[eds+"/"+node] {
		out = append(out, c.pods[uid])
	}
	return out
}

func (c *Checker) availableOn(eds, node string) bool {
	return slices.ContainsFunc(c.podsOn(eds, node), func(p podInfo) bool { return p.ready && !p.terminating })
}

// podAvailable says whether p is an available agent on a Ready node.
func (c *Checker) podAvailable(p podInfo) bool {
	n, ok := c.nodes[p.node]
	return p.ready && !p.terminating && ok && nodeReady(n)
}

// seeAvailablePod records that p, as the monitor knew it until now, was
// available until now.
func (c *Checker) seeAvailablePod(p podInfo, now time.Time) {
	if c.podAvailable(p) {
		c.lastAvailable[p.node+"/"+p.replicaSet] = now
	}
}

// seeAvailable records the pods of node that were available until now,
// before the node changes.
func (c *Checker) seeAvailable(node string, now time.Time) {
	for key, uids := range c.onNode {
		if !strings.HasSuffix(key, "/"+node) {
			continue
		}
		for uid := range uids {
			c.seeAvailablePod(c.pods[uid], now)
		}
	}
}

func (c *Checker) hasLivePod(eds, node string) bool { return c.livePods(eds, node) > 0 }

// livePods counts the pods of eds on node that are not terminating.
func (c *Checker) livePods(eds, node string) int {
	n := 0
	for _, p := range c.podsOn(eds, node) {
		if !p.terminating {
			n++
		}
	}
	return n
}

// fitting is how many nodes the budgets' percentages resolve against:
// every Ready node the template fits, in maintenance or not.
func (s *setState) fitting() int { return len(s.desired) + len(s.inMaintenance) }

// budgets resolves maxUnavailable and maxSurge as the controller does:
// against the nodes the ExtendedDaemonSet runs on, rounding up.
func budgets(eds *v1alpha1.ExtendedDaemonSet, desired int) (maxUnavailable, maxSurge int) {
	resolve := func(v *intstr.IntOrString, def int) int {
		if v == nil {
			return def
		}
		n, err := intstr.GetScaledValueFromIntOrPercent(v, desired, true)
		if err != nil {
			return def
		}
		return n
	}
	ru := eds.Spec.Strategy.RollingUpdate
	return resolve(ru.MaxUnavailable, 1), resolve(ru.MaxSurge, 0)
}

// checkBudget judges the rollout taking the agent of node down at now: it
// may not leave more desired nodes without an available agent than
// maxUnavailable allows. Agents that failed on their own count too, once
// the controller could have seen them fail (ReactionTime): when they exceed
// the budget, the controller must take none down, though it may replace
// them.
func (c *Checker) checkBudget(s *setState, node string, now time.Time) {
	c.checkDomainBudget(s, node, now)
	maxUnavailable, _ := budgets(s.eds, s.fitting())
	c.suspectBeyond(s, node, now, maxUnavailable, "")
}

// suspectBeyond holds as a suspect the outages of s counted against a
// budget when the rollout takes node down at now, among the nodes of
// domain (every node when empty), if they exceed budget.
func (c *Checker) suspectBeyond(s *setState, node string, now time.Time, budget int, domain string) {
	key := topologyKey(s.eds)
	nodes := []string{node}
	for n, o := range s.outages {
		if n != node && (domain == "" || c.domainOf(n, key) == domain) && (o.byRollout || o.since.Before(now.Add(-c.reactionTime()))) {
			nodes = append(nodes, n)
		}
	}
	if len(nodes) <= budget {
		return
	}
	sort.Strings(nodes)
	c.suspects = append(c.suspects, suspect{eds: s.eds.Name, at: now, nodes: nodes, budget: budget, domain: domain})
}

// settleSuspect confirms a suspected breach unless, with what the other
// watches said since, its nodes were not all desired or the budget was
// larger.
func (c *Checker) settleSuspect(sus suspect) {
	s := c.sets[sus.eds]
	if s == nil {
		return
	}
	if sus.domain != "" {
		c.settleDomainSuspect(s, sus)
		return
	}
	still := c.stillOut(s, sus)
	maxUnavailable, _ := budgets(s.eds, s.fitting())
	budget := max(sus.budget, maxUnavailable)
	if len(still) <= budget {
		return
	}
	c.violate(sus.at, Unavailable, "eds %s: %d nodes without an available agent (%s), maxUnavailable allows %d of %d",
		sus.eds, len(still), strings.Join(still, ", "), budget, len(s.desired))
}

// stillOut is the suspect's nodes that are still desired and, for a
// domain's suspect, still in that domain, with what the other watches
// said since.
func (c *Checker) stillOut(s *setState, sus suspect) []string {
	key := topologyKey(s.eds)
	var still []string
	for _, n := range sus.nodes {
		if s.desired[n] && (sus.domain == "" || c.domainOf(n, key) == sus.domain) {
			still = append(still, n)
		}
	}
	return still
}

// checkPerNode enforces one pod per node outside a surge, and the surge
// budget.
func (c *Checker) checkPerNode(s *setState, node string, now time.Time) {
	live := c.livePods(s.eds.Name, node)
	if live < 2 {
		delete(s.surging, node)
		return
	}
	s.surging[node] = true
	_, maxSurge := budgets(s.eds, s.fitting())
	switch {
	case maxSurge == 0:
		c.violate(now, TwoPods, "eds %s: %d pods on node %s and maxSurge allows none", s.eds.Name, live, node)
		return
	case live > 2:
		c.violate(now, TwoPods, "eds %s: %d pods on node %s", s.eds.Name, live, node)
		return
	}
	if len(s.surging) > maxSurge {
		c.violate(now, TwoPods, "eds %s: %d nodes with two pods, maxSurge allows %d", s.eds.Name, len(s.surging), maxSurge)
	}
}

// checkSpecWriter fails once per ExtendedDaemonSet whose spec the
// controller's field manager owns: only the user writes the spec.
func (c *Checker) checkSpecWriter(s *setState, now time.Time) {
	if s.specWriter || c.FieldManager == "" {
		return
	}
	for _, e := range s.eds.ManagedFields {
		if e.Manager != c.FieldManager || e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		if strings.Contains(e.FieldsV1.GetRawString(), `"f:spec"`) {
			s.specWriter = true
			c.violate(now, SpecWritten, "eds %s: the controller (%s) wrote its spec (generation %d)", s.eds.Name, e.Manager, s.eds.Generation)
			return
		}
	}
}

// trackFailure remembers when each canary was first seen failed, and on
// which nodes.
func (c *Checker) trackFailure(s *setState, now time.Time) {
	cs := s.eds.Status.Canary
	for rs := range s.failed {
		if cs == nil || cs.ReplicaSet != rs || !cs.Failed {
			delete(s.failed, rs)
		}
	}
	if cs != nil && cs.Failed {
		if _, known := s.failed[cs.ReplicaSet]; !known {
			s.failed[cs.ReplicaSet] = failedCanary{since: now, nodes: slices.Clone(cs.Nodes)}
			c.note(now, "eds %s: canary %s failed on %s", s.eds.Name, cs.ReplicaSet, strings.Join(cs.Nodes, ", "))
		}
	}
}

// checkFailedPods fails on a live pod of a failed template off the
// canary's nodes that was created after the failure, or that outlived it by
// twice the grace period (time for the controller to see the failure).
func (c *Checker) checkFailedPods(s *setState, now time.Time) {
	for rs, f := range s.failed {
		for uid, p := range c.pods {
			if p.replicaSet != rs || p.terminating || p.node == "" || slices.Contains(f.nodes, p.node) {
				continue
			}
			if p.firstSeen.After(f.since) || now.Sub(f.since) >= 2*c.grace() {
				c.violate(now, FailedTemplate, "eds %s: pod %s of failed template %s on %s, off the canary nodes %s",
					s.eds.Name, p.name, rs, p.node, strings.Join(f.nodes, ", "))
				// Once is enough for one pod.
				p.terminating = true
				c.pods[uid] = p
			}
		}
	}
}

// noteStatus puts the status changes a reader of the timeline needs.
func (c *Checker) noteStatus(before, eds *v1alpha1.ExtendedDaemonSet, now time.Time) {
	describe := func(e *v1alpha1.ExtendedDaemonSet) string {
		if e == nil {
			return ""
		}
		st := e.Status
		out := fmt.Sprintf("gen %d active %s", e.Generation, st.ActiveReplicaSet)
		if cs := st.Canary; cs != nil {
			out += fmt.Sprintf(" canary %s nodes %v paused=%t failed=%t", cs.ReplicaSet, cs.Nodes, cs.Paused, cs.Failed)
			if cs.Analysis != nil {
				out += " analysis " + string(cs.Analysis.Phase)
			}
		}
		return out
	}
	if d := describe(eds); d != describe(before) {
		c.note(now, "eds %s: %s", eds.Name, d)
	}
}

// RunningAndReady is what the rules count as an available agent: a running
// pod whose Ready condition is True and whose containers run the images it
// specifies (an image patched in place is not running until its container
// says so, whatever the Ready condition still says).
func RunningAndReady(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodRunning && !imageChanging(pod) && placement.PodReady(pod)
}

// nodeReady is false for a node whose Ready condition is not True: the
// controller stops counting its agent once it is unresponsive, and the
// agent on it is the kubelet's to keep, not the rollout's.
func nodeReady(node *corev1.Node) bool {
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return true
}

// imageChanging reports whether a container's status shows another image
// than its spec: an image was patched and the container not restarted on it
// yet. The kubelet reports the image as the spec gives it. Init containers
// count only when restartable: the others are not run again.
func imageChanging(pod *corev1.Pod) bool {
	changing := func(containers []corev1.Container, statuses []corev1.ContainerStatus, sidecarsOnly bool) bool {
		for _, c := range containers {
			if sidecarsOnly && (c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways) {
				continue
			}
			for _, st := range statuses {
				if st.Name == c.Name && st.Image != c.Image {
					return true
				}
			}
		}
		return false
	}
	return changing(pod.Spec.Containers, pod.Status.ContainerStatuses, false) ||
		changing(pod.Spec.InitContainers, pod.Status.InitContainerStatuses, true)
}

// evicted reports whether the pod's DisruptionTarget condition is True:
// the API server sets it on a pod it evicts, before deleting it.
func evicted(pod *corev1.Pod) bool {
	return podConditionIs(pod, corev1.DisruptionTarget, corev1.ConditionTrue)
}

// restarts counts the restarts of the pod's containers.
func restarts(pod *corev1.Pod) int32 {
	var n int32
	for _, st := range pod.Status.ContainerStatuses {
		n += st.RestartCount
	}
	return n
}

// progress pushes the deadline of the pod's ExtendedDaemonSet when a node
// gains an available pod of a replica set, or loses one, for the first
// time since the last change, or when a container of the running canary
// restarts (noRestartsDuration holds its promotion from then on).
func (c *Checker) progress(prev podInfo, known bool, info podInfo, deleted bool, now time.Time) {
	key := info.node + "/" + info.replicaSet
	switch {
	case deleted:
		c.moved(info.eds, "-"+key, now)
	case info.ready && !info.terminating && (!known || !prev.ready || prev.terminating):
		c.moved(info.eds, key, now)
	}
	if s := c.sets[info.eds]; s != nil && known && info.restarts > prev.restarts {
		if cs := s.eds.Status.Canary; cs != nil && cs.ReplicaSet == info.replicaSet {
			c.moved(info.eds, "", now)
		}
	}
}

// inPlaceGateClosed reports whether the pod's in-place readiness gate is
// False: the controller took it out of service to update it.
func inPlaceGateClosed(pod *corev1.Pod) bool {
	return podConditionIs(pod, v1alpha1.InPlaceUpdateReadyCondition, corev1.ConditionFalse)
}

// podConditionIs reports whether the pod's condition of type t has status
// want; a pod without that condition has not.
func podConditionIs(pod *corev1.Pod, t corev1.PodConditionType, want corev1.ConditionStatus) bool {
	for _, cond := range pod.Status.Conditions {
		if cond.Type == t {
			return cond.Status == want
		}
	}
	return false
}
