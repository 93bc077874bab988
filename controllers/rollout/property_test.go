package rollout

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The property tests draw random clusters from a seed. A failure prints the
// seed and the case; replay it with, for example:
//
//	ROLLOUT_PROPERTY_SEED=123 ROLLOUT_PROPERTY_CASE=45 go test ./controllers/rollout/ -run Property
const (
	seedEnv = "ROLLOUT_PROPERTY_SEED"
	caseEnv = "ROLLOUT_PROPERTY_CASE"
)

// propertySeed returns the seed (random unless set in the environment) and
// the only case to run (-1 for all).
func propertySeed(t *testing.T) (seed uint64, only int) {
	t.Helper()
	seed, only = rand.Uint64(), -1
	if s := os.Getenv(seedEnv); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", seedEnv, s, err)
		}
		seed = v
	}
	if s := os.Getenv(caseEnv); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("%s=%q: %v", caseEnv, s, err)
		}
		only = v
	}
	t.Logf("seed %d (replay with %s=%d)", seed, seedEnv, seed)
	return seed, only
}

// caseRand is the generator of one case: each case has its own stream, so
// one case replays alone.
func caseRand(seed uint64, c int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(c)))
}

// world is a cluster state the planner plans from.
type world struct {
	nodes   []Node
	pods    map[string][]Pod
	backoff map[string]time.Time
	params  Params
	now     time.Time
	// created names the pods plans create.
	created int
}

func (w *world) input() Input {
	return Input{Nodes: w.nodes, Pods: w.pods, BackoffUntil: w.backoff, Params: w.params, Now: w.now}
}

func (w *world) clone() *world {
	c := *w
	c.nodes = slices.Clone(w.nodes)
	c.pods = make(map[string][]Pod, len(w.pods))
	for node, pods := range w.pods {
		c.pods[node] = slices.Clone(pods)
	}
	c.backoff = maps.Clone(w.backoff)
	return &c
}

func randDur(r *rand.Rand, d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(r.Int64N(int64(d) + 1))
}

// genParams draws rollout settings for n nodes: budgets mostly small,
// sometimes up to n; MaxUnavailable and MaxSurge never both zero.
func genParams(r *rand.Rand, n int) Params {
	budget := func() int {
		switch x := r.IntN(10); {
		case x < 6:
			return r.IntN(min(n, 3) + 1)
		case x < 9:
			return r.IntN(n + 1)
		default:
			return n
		}
	}
	p := Params{MaxUnavailable: budget()}
	if r.IntN(2) == 0 {
		p.MaxSurge = budget()
	}
	if p.MaxUnavailable == 0 && p.MaxSurge == 0 {
		if r.IntN(2) == 0 {
			p.MaxUnavailable = 1
		} else {
			p.MaxSurge = 1
		}
	}
	if r.IntN(2) == 0 {
		p.MinReady = time.Duration(1+r.IntN(120)) * time.Second
	}
	switch x := r.IntN(10); {
	case x < 1:
		p.MaxParallelPodCreation = 0
	case x < 7:
		p.MaxParallelPodCreation = 1 + r.IntN(10)
	default:
		p.MaxParallelPodCreation = 1 + r.IntN(n+1)
	}
	if r.IntN(10) < 3 {
		p.SlowStartInterval = time.Duration(1+r.IntN(10)) * time.Minute
		p.SlowStartIncrease = r.IntN(6)
		p.StartedAt = now.Add(-randDur(r, 2*time.Hour))
		if r.IntN(20) == 0 {
			p.StartedAt = now.Add(randDur(r, 10*time.Minute))
		}
	}
	if r.IntN(10) < 3 {
		p.MaxPodSchedulerFailure = 1 + r.IntN(5)
	}
	p.Paused = r.IntN(100) < 6
	p.Frozen = r.IntN(100) < 5
	return p
}

// genWorld draws a cluster of n nodes. A quiet world has nothing in flight:
// every new pod is available, nothing fails or terminates.
func genWorld(r *rand.Rand, n int, quiet bool) *world {
	w := &world{pods: map[string][]Pod{}, backoff: map[string]time.Time{}, now: now, params: genParams(r, n)}
	id := 0
	for i := range n {
		name := fmt.Sprintf("node-%05d", i)
		switch x := r.IntN(100); {
		case x < 82:
			w.nodes = append(w.nodes, desired(name))
		case x < 90:
			w.nodes = append(w.nodes, misfit(name))
		default:
			w.nodes = append(w.nodes, unfit(name))
		}
		add := func(isNew bool) *Pod {
			id++
			p := Pod{
				Name:      fmt.Sprintf("pod-%d", id),
				Node:      name,
				New:       isNew,
				CreatedAt: now.Add(-time.Duration(r.IntN(6)) * time.Minute),
			}
			w.genState(r, &p, quiet)
			w.pods[name] = append(w.pods[name], p)
			return &w.pods[name][len(w.pods[name])-1]
		}
		switch x := r.IntN(100); {
		case x < 12: // no pod
		case x < 45:
			add(false)
		case x < 75:
			add(true)
		default: // a surge in flight, or one that can end
			add(false)
			add(true)
		}
		if quiet {
			continue
		}
		if r.IntN(100) < 8 {
			add(true)
		}
		if r.IntN(100) < 5 {
			add(false)
		}
		if r.IntN(100) < 8 {
			add(r.IntN(2) == 0).Terminating = true
		}
		if slices.ContainsFunc(w.pods[name], func(p Pod) bool { return p.Failed }) {
			switch x := r.IntN(100); {
			case x < 45:
				w.backoff[name] = now.Add(time.Second + randDur(r, 5*time.Minute))
			case x < 65:
				w.backoff[name] = now.Add(-randDur(r, 5*time.Minute))
			}
		} else if r.IntN(100) < 2 {
			w.backoff[name] = now.Add(randDur(r, 5*time.Minute))
		}
	}
	r.Shuffle(len(w.nodes), func(i, j int) { w.nodes[i], w.nodes[j] = w.nodes[j], w.nodes[i] })
	return w
}

// genState draws a pod's readiness, failure and scheduling.
func (w *world) genState(r *rand.Rand, p *Pod, quiet bool) {
	minReady := w.params.MinReady
	if quiet && p.New {
		p.ReadySince = w.now.Add(-minReady - randDur(r, time.Hour))
		return
	}
	switch x := r.IntN(100); {
	case x < 5:
		p.ReadySince = w.now.Add(-minReady)
	case x < 60:
		p.ReadySince = w.now.Add(-randDur(r, 2*minReady+time.Minute))
	case x < 63: // the node's clock is ahead
		p.ReadySince = w.now.Add(time.Second + randDur(r, 10*time.Second))
	default:
		if p.New && !quiet && r.IntN(100) < 15 {
			p.Unschedulable = true
		}
	}
	if !quiet && r.IntN(100) < 5 {
		p.Failed = true
	}
}

// markInPlace flags, at random, old pods as updatable in place (some of them
// draining behind their readiness gate) and new pods as mid-update, as a
// rollout with InPlaceIfPossible sees them.
func (w *world) markInPlace(r *rand.Rand) {
	for node, pods := range w.pods {
		for i := range pods {
			switch p := &pods[i]; {
			case !p.New:
				p.InPlace = r.IntN(2) == 0
				p.Draining = p.InPlace && !p.Failed && !p.Terminating && r.IntN(10) == 0
				p.GateClosed = p.Draining
			case !p.Failed && !p.Terminating:
				p.Updating = r.IntN(5) == 0
			}
		}
		w.pods[node] = pods
	}
}

// apply returns the world after the plan: deleted pods gone, created pods
// present as new and not ready, pods updated in place new and mid-update.
// Terminating pods stay.
func apply(w *world, plan Plan) (*world, error) {
	after := w.clone()
	for _, d := range plan.Delete {
		pods := after.pods[d.Node]
		i := slices.IndexFunc(pods, func(p Pod) bool { return p.Name == d.Pod })
		if i < 0 {
			return nil, fmt.Errorf("deletes %s on %s (%s): no such pod there, or deleted twice", d.Pod, d.Node, d.Reason)
		}
		after.pods[d.Node] = slices.Delete(pods, i, i+1)
	}
	for _, u := range plan.UpdateInPlace {
		pods := after.pods[u.Node]
		i := slices.IndexFunc(pods, func(p Pod) bool { return p.Name == u.Pod })
		if i < 0 {
			return nil, fmt.Errorf("updates %s on %s in place: no such pod there, or deleted in the same plan", u.Pod, u.Node)
		}
		if p := pods[i]; p.New || !p.InPlace || p.Terminating || p.Failed {
			return nil, fmt.Errorf("updates %s on %s in place, which is not an old pod updatable in place: %+v", u.Pod, u.Node, p)
		}
		pods[i].New, pods[i].InPlace, pods[i].Updating, pods[i].GateClosed = true, false, true, false
	}
	for _, name := range plan.Reopen {
		for node, pods := range after.pods {
			if i := slices.IndexFunc(pods, func(p Pod) bool { return p.Name == name }); i >= 0 {
				// Back in service once the kubelet sees the gate open.
				pods[i].Draining, pods[i].GateClosed = false, false
				after.pods[node] = pods
			}
		}
	}
	for _, node := range plan.Create {
		after.created++
		after.pods[node] = append(after.pods[node], Pod{
			Name:      fmt.Sprintf("created-%d", after.created),
			Node:      node,
			New:       true,
			CreatedAt: w.now,
		})
	}
	return after, nil
}

func (w *world) available(p *Pod) bool { return p.Available(w.params.MinReady, w.now) }

func (w *world) hasAvailable(node string) bool {
	return slices.ContainsFunc(w.pods[node], func(p Pod) bool { return w.available(&p) })
}

func (w *world) hasTerminating(node string) bool {
	return slices.ContainsFunc(w.pods[node], func(p Pod) bool { return p.Terminating })
}

// podNamed finds a pod by name on any node.
func (w *world) podNamed(name string) (Pod, bool) {
	for node := range w.pods {
		if p, ok := w.findPod(node, name); ok {
			return p, true
		}
	}
	return Pod{}, false
}

// hasGateClosed reports whether the only pod of a node that keeps its
// pods, not unresponsive, is an old one whose gate was closed for an
// update.
func (w *world) hasGateClosed() bool {
	for _, n := range w.nodes {
		if pods := w.pods[n.Name]; n.ShouldContinueRunning && !n.Unresponsive && len(pods) == 1 {
			if p := pods[0]; p.GateClosed && !p.New && !p.Terminating && !p.Failed {
				return true
			}
		}
	}
	return false
}

func (w *world) findPod(node, name string) (Pod, bool) {
	i := slices.IndexFunc(w.pods[node], func(p Pod) bool { return p.Name == name })
	if i < 0 {
		return Pod{}, false
	}
	return w.pods[node][i], true
}

// unavailable is U: the desired nodes without an available pod.
func (w *world) unavailable() int {
	u := 0
	for _, n := range w.nodes {
		if n.ShouldRun && !w.hasAvailable(n.Name) {
			u++
		}
	}
	return u
}

// schedulerAllowance is how many unavailable desired nodes MaxPodSchedulerFailure
// excuses: those whose new pod the scheduler could not place.
func (w *world) schedulerAllowance() int {
	a := 0
	for _, n := range w.nodes {
		if n.ShouldRun && !w.hasAvailable(n.Name) && slices.ContainsFunc(w.pods[n.Name], func(p Pod) bool {
			return p.New && p.Unschedulable && !p.Failed && !p.Terminating
		}) {
			a++
		}
	}
	return min(a, w.params.MaxPodSchedulerFailure)
}

// occupancy counts the new and old pods on a node that are not terminating
// (failed pods included: they still hold the node).
func (w *world) occupancy(node string) (newPods, oldPods int) {
	for _, p := range w.pods[node] {
		switch {
		case p.Terminating:
		case p.New:
			newPods++
		default:
			oldPods++
		}
	}
	return newPods, oldPods
}

// surgeNodes counts the nodes holding both an old and a new pod.
func (w *world) surgeNodes() int {
	s := 0
	for node := range w.pods {
		if n, o := w.occupancy(node); n > 0 && o > 0 {
			s++
		}
	}
	return s
}

// quiet reports that nothing is in flight: every new pod is available and no
// pod is terminating, failed or draining, and no backoff runs.
func (w *world) quiet() bool {
	for _, pods := range w.pods {
		for _, p := range pods {
			if p.Terminating || p.Failed || p.Draining || (p.New && !w.available(&p)) {
				return false
			}
		}
	}
	for _, until := range w.backoff {
		if w.now.Before(until) {
			return false
		}
	}
	return true
}

// upToDate reports whether a desired node has an available new pod and no
// old pod.
func (w *world) upToDate(node string) bool {
	hasNew := false
	for _, p := range w.pods[node] {
		if p.Terminating {
			continue
		}
		if !p.New {
			return false
		}
		hasNew = hasNew || w.available(&p)
	}
	return hasNew
}

func (w *world) describe(node string) string {
	var b strings.Builder
	i := slices.IndexFunc(w.nodes, func(n Node) bool { return n.Name == node })
	if i >= 0 {
		fmt.Fprintf(&b, "%s{run=%t continue=%t}", node, w.nodes[i].ShouldRun, w.nodes[i].ShouldContinueRunning)
	} else {
		fmt.Fprintf(&b, "%s{not listed}", node)
	}
	if until, ok := w.backoff[node]; ok {
		fmt.Fprintf(&b, " backoff=%s", until.Sub(w.now))
	}
	for _, p := range w.pods[node] {
		kind := "old"
		if p.New {
			kind = "new"
		}
		fmt.Fprintf(&b, " [%s %s", p.Name, kind)
		if p.Ready() {
			fmt.Fprintf(&b, " ready=%s", w.now.Sub(p.ReadySince))
			if w.available(&p) {
				b.WriteString(" available")
			}
		}
		for flag, on := range map[string]bool{
			"failed": p.Failed, "terminating": p.Terminating, "unschedulable": p.Unschedulable,
			"in-place": p.InPlace, "updating": p.Updating,
		} {
			if on {
				b.WriteString(" " + flag)
			}
		}
		b.WriteString("]")
	}
	return b.String()
}

// checkPlan returns the invariants the plan breaks, from the world before it
// and after it is applied.
func checkPlan(before *world, plan Plan, after *world) []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	params := before.params
	nodes := make(map[string]Node, len(before.nodes))
	desiredCount := 0
	for _, n := range before.nodes {
		nodes[n.Name] = n
		if n.ShouldRun {
			desiredCount++
		}
	}

	if params.Frozen && len(plan.Create)+len(plan.Delete)+len(plan.UpdateInPlace)+len(plan.FailedNodes) > 0 {
		fail("frozen, yet the plan creates %v, deletes %v, updates %v, fails %v", plan.Create, plan.Delete, plan.UpdateInPlace, plan.FailedNodes)
	}
	if params.Paused && len(plan.UpdateInPlace) > 0 {
		fail("paused, yet the plan updates %v in place", plan.UpdateInPlace)
	}
	for _, u := range plan.UpdateInPlace {
		if n := nodes[u.Node]; !n.ShouldRun {
			fail("updates %s in place on %s, which should not run a pod", u.Pod, before.describe(u.Node))
		}
		if slices.Contains(plan.Reopen, u.Pod) {
			fail("updates %s in place and reopens its gate", u.Pod)
		}
	}
	for _, name := range plan.Reopen {
		if p, ok := before.podNamed(name); !ok || p.New || !p.GateClosed {
			fail("reopens %s, which is not an old pod whose gate was closed for its update", name)
		}
	}
	if (params.Paused || params.Frozen) && before.hasGateClosed() && len(plan.Reopen) == 0 {
		fail("paused or frozen, yet the gates closed for updates that do not go on stay closed")
	}
	if plan.Counts.Desired != desiredCount {
		fail("Counts.Desired is %d, %d nodes should run a pod", plan.Counts.Desired, desiredCount)
	}

	// Deletions: each of a live pod, once.
	deleted := map[string]bool{}
	for _, d := range plan.Delete {
		if deleted[d.Pod] {
			fail("deletes %s twice", d.Pod)
		}
		deleted[d.Pod] = true
		if p, ok := before.findPod(d.Node, d.Pod); ok && p.Terminating {
			fail("deletes %s (%s), which is already terminating: %s", d.Pod, d.Reason, before.describe(d.Node))
		}
	}
	for _, node := range plan.FailedNodes {
		if !slices.ContainsFunc(plan.Delete, func(d Deletion) bool { return d.Node == node && d.Reason == DeleteFailed }) {
			fail("reports %s as failed but deletes no failed pod there", node)
		}
	}

	// Creations: on desired nodes, nothing terminating there, one per node.
	created := map[string]bool{}
	for _, node := range plan.Create {
		if created[node] {
			fail("creates two pods on %s in one plan", node)
		}
		created[node] = true
		if n, ok := nodes[node]; !ok || !n.ShouldRun {
			fail("creates a pod on %s, which should not run one", before.describe(node))
		}
		if before.hasTerminating(node) {
			fail("creates a pod on %s, which still has a pod terminating", before.describe(node))
		}
	}

	// Availability.
	uBefore, uAfter := before.unavailable(), after.unavailable()
	limit := params.MaxUnavailable + before.schedulerAllowance()
	// In-place updates spend maxUnavailable in surge mode too.
	if params.MaxSurge == 0 || len(plan.UpdateInPlace) > 0 {
		if uAfter > max(limit, uBefore) {
			fail("delete mode: %d desired nodes without an available pod after the plan, more than max(maxUnavailable %d + scheduler allowance %d, %d before)",
				uAfter, params.MaxUnavailable, limit-params.MaxUnavailable, uBefore)
		}
	} else if uAfter > uBefore {
		fail("surge mode: %d desired nodes without an available pod after the plan, %d before", uAfter, uBefore)
	}
	updatedOn := map[string]bool{}
	for _, u := range plan.UpdateInPlace {
		updatedOn[u.Node] = true
	}
	if params.MaxSurge > 0 || uBefore >= limit {
		for _, d := range plan.Delete {
			if updatedOn[d.Node] && uBefore < limit {
				// A duplicate goes beside the pod updated in place, which
				// spends maxUnavailable in surge mode too.
				continue
			}
			p, ok := before.findPod(d.Node, d.Pod)
			if ok && nodes[d.Node].ShouldRun && before.available(&p) && !after.hasAvailable(d.Node) {
				fail("deletes %s (%s), the last available pod of %s, with %d of maxUnavailable %d (+%d) nodes unavailable, maxSurge %d",
					d.Pod, d.Reason, before.describe(d.Node), uBefore, params.MaxUnavailable, limit-params.MaxUnavailable, params.MaxSurge)
			}
		}
	}

	// One pod per node, but for at most maxSurge surges. A frozen plan is
	// only bound to be empty: it leaves duplicates as they are.
	if params.Frozen {
		return errs
	}
	for node := range after.pods {
		switch n, o := after.occupancy(node); {
		case n+o <= 1:
		case n == 1 && o == 1:
		default:
			fail("after the plan %s holds %d new and %d old pods (before: %s)", after.describe(node), n, o, before.describe(node))
		}
	}
	if sBefore, sAfter := before.surgeNodes(), after.surgeNodes(); sAfter > max(params.MaxSurge, sBefore) {
		var surging []string
		for _, n := range before.nodes {
			if nw, o := after.occupancy(n.Name); nw > 0 && o > 0 {
				surging = append(surging, before.describe(n.Name))
			}
		}
		fail("%d nodes hold an old and a new pod after the plan, %d before, maxSurge %d; before the plan they were: %s",
			sAfter, sBefore, params.MaxSurge, strings.Join(surging, "; "))
	}

	// Progress.
	if before.mustProgress() && len(plan.Create)+len(plan.Delete)+len(plan.UpdateInPlace) == 0 {
		fail("no progress: nothing in flight, nodes to update, budget left (U=%d maxUnavailable=%d maxSurge=%d), yet an empty plan",
			uBefore, params.MaxUnavailable, params.MaxSurge)
	}
	return errs
}

// mustProgress reports whether a plan on w must act: the rollout is neither
// frozen nor paused, nothing is in flight, some desired node is not up to
// date, and the budget allows a step.
func (w *world) mustProgress() bool {
	params := w.params
	if params.Frozen || params.Paused || !w.quiet() {
		return false
	}
	stale, emptyOrUnavailable := false, false
	for _, n := range w.nodes {
		if !n.ShouldRun {
			continue
		}
		stale = stale || !w.upToDate(n.Name)
		emptyOrUnavailable = emptyOrUnavailable || len(w.pods[n.Name]) == 0 ||
			slices.ContainsFunc(w.pods[n.Name], func(p Pod) bool { return !w.available(&p) })
	}
	return stale && (params.MaxSurge > 0 || w.unavailable() < params.MaxUnavailable || emptyOrUnavailable)
}

// step plans on w with the State of tr, checks that the planners are pure,
// that the State plans as Compute does (so that Compute is deterministic
// too: the two reach the plan by different paths), and that the plan keeps
// the invariants, and returns the plan and the world after.
func step(w *world, tr *tracker) (Plan, *world, []string) {
	snapshot := w.clone()
	plan, err := tr.plan(w.input())
	if !reflect.DeepEqual(snapshot, w) {
		return plan, nil, []string{"the planners modified their input"}
	}
	if err != nil {
		return plan, nil, []string{err.Error()}
	}
	after, err := apply(w, plan)
	if err != nil {
		return plan, nil, []string{err.Error()}
	}
	return plan, after, checkPlan(w, plan, after)
}

func report(t *testing.T, seed uint64, c int, w *world, errs []string) {
	t.Helper()
	const shown = 5
	if len(errs) > shown {
		errs = append(errs[:shown], fmt.Sprintf("... and %d more", len(errs)-shown))
	}
	t.Fatalf("case %d: %d nodes, params %+v:\n  %s\nreplay with %s=%d %s=%d",
		c, len(w.nodes), w.params, strings.Join(errs, "\n  "), seedEnv, seed, caseEnv, c)
}

// inPlaceOffset sets the streams that flag pods for in-place updates apart
// from the others.
const inPlaceOffset = 1 << 30

// maintenanceOffset sets the streams that put nodes of a fuzzed fleet in
// maintenance apart from the others in the same way.
const maintenanceOffset = 1 << 31

// TestPropertyPlanInvariants plans on random clusters, a few large, many
// small, and checks every invariant of a single plan.
func TestPropertyPlanInvariants(t *testing.T) {
	seed, only := propertySeed(t)
	const cases = 10000
	start := time.Now()
	var ran, nodesSeen, progressCases, acted int
	for c := range cases {
		if only >= 0 && c != only {
			continue
		}
		r := caseRand(seed, c)
		var n int
		switch {
		case c < 20:
			n = 1000 + r.IntN(4001)
		case c%10 == 0:
			n = 40 + r.IntN(461)
		default:
			n = 1 + r.IntN(40)
		}
		w := genWorld(r, n, r.IntN(4) == 0)
		tr := newTracker()
		plan, _, errs := step(w, tr)
		if len(errs) > 0 {
			report(t, seed, c, w, errs)
		}
		// The same cluster rolling out with InPlaceIfPossible, drawn from a
		// stream of its own so that the cases above replay as before. The
		// State is told only of the nodes whose pods were flagged.
		inPlace := w.clone()
		inPlace.markInPlace(caseRand(seed, c+inPlaceOffset))
		if _, _, errs := step(inPlace, tr); len(errs) > 0 {
			report(t, seed, c, inPlace, append(errs, "with pods updatable in place"))
		}
		ran++
		nodesSeen += n
		if w.mustProgress() {
			progressCases++
		}
		if len(plan.Create)+len(plan.Delete) > 0 {
			acted++
		}
	}
	t.Logf("%d cases, %d nodes, %d that must progress, %d plans with actions, in %s",
		ran, nodesSeen, progressCases, acted, time.Since(start).Round(time.Millisecond))
}

// settle lets time pass after a plan: terminating pods are gone, every pod
// that has not failed becomes available, nodes whose failed pod was deleted
// get a backoff, and backoffs end. With chaos (r not nil), some terminating
// pods linger, some pods stay unready or unschedulable, and some fail.
func (w *world) settle(plan Plan, r *rand.Rand) {
	chance := func(percent int) bool { return r != nil && r.IntN(100) < percent }
	for node, pods := range w.pods {
		pods = slices.DeleteFunc(pods, func(p Pod) bool { return p.Terminating && !chance(40) })
		for i := range pods {
			switch p := &pods[i]; {
			case p.Failed || p.Terminating:
			case p.Updating && !chance(25):
				p.Updating, p.ReadySince = false, w.now
			case p.Draining && !chance(25):
				p.Draining, p.ReadySince = false, time.Time{}
			case chance(3):
				p.Failed = true
			case chance(25):
				if p.ReadySince.IsZero() && p.New && chance(20) {
					p.Unschedulable = true
				}
			default:
				if p.ReadySince.IsZero() {
					p.ReadySince = w.now
				}
				p.Unschedulable = false
			}
		}
		w.pods[node] = pods
	}
	for _, node := range plan.FailedNodes {
		w.backoff[node] = w.now.Add(30 * time.Second)
	}
	w.now = w.now.Add(w.params.MinReady + time.Minute)
}

// TestPropertyRolloutConverges plans, applies and settles random clusters
// until every desired node runs one available new pod and nothing is left
// to do, checking every plan on the way. The first steps are chaotic (pods
// fail, stay unready, linger terminating); once pods settle, the rollout
// must end within two steps per desired node (a deletion then a creation)
// plus a few for backoffs.
func TestPropertyRolloutConverges(t *testing.T) {
	seed, only := propertySeed(t)
	const cases = 1000
	const offset = 1 << 20 // streams apart from TestPropertyPlanInvariants
	start := time.Now()
	ran, steps := 0, 0
	for c := offset; c < offset+cases; c++ {
		if only >= 0 && c != only {
			continue
		}
		r := caseRand(seed, c)
		w := genWorld(r, 1+r.IntN(150), false)
		w.params.Paused, w.params.Frozen = false, false
		if c%2 == 1 {
			w.markInPlace(caseRand(seed, c+inPlaceOffset))
		}
		desiredCount := 0
		for _, n := range w.nodes {
			if n.ShouldRun {
				desiredCount++
			}
		}
		chaos := r.IntN(8)
		bound := chaos + 2*desiredCount + 10
		tr := newTracker()
		for i := 0; ; i++ {
			plan, after, errs := step(w, tr)
			if len(errs) > 0 {
				report(t, seed, c, w, append(errs, fmt.Sprintf("at step %d", i)))
			}
			if len(plan.Create)+len(plan.Delete)+len(plan.UpdateInPlace)+len(plan.FailedNodes) == 0 && w.rolledOut() {
				ran++
				steps += i
				break
			}
			if i == bound {
				var stale []string
				for _, n := range w.nodes {
					if n.ShouldRun && !w.upToDate(n.Name) && len(stale) < 5 {
						stale = append(stale, w.describe(n.Name))
					}
				}
				report(t, seed, c, w, []string{fmt.Sprintf("not rolled out after %d steps; last plan %+v; stale nodes: %v",
					i, plan, stale)})
			}
			if i < chaos {
				after.settle(plan, r)
			} else {
				after.settle(plan, nil)
			}
			w = after
		}
	}
	t.Logf("%d rollouts, %d steps, in %s", ran, steps, time.Since(start).Round(time.Millisecond))
}

// rolledOut reports whether every desired node runs exactly one pod, new and
// available, and no node that should not keep pods holds one.
func (w *world) rolledOut() bool {
	for _, n := range w.nodes {
		pods := w.pods[n.Name]
		switch {
		case n.ShouldRun:
			if len(pods) != 1 || !pods[0].New || !w.available(&pods[0]) {
				return false
			}
		case !n.ShouldContinueRunning:
			if len(pods) > 0 {
				return false
			}
		}
	}
	return true
}
