package rollout

import (
	"slices"
	"strings"
	"time"
)

// A plan is made in two phases. The first looks at each node alone: what
// it counts for, which of its pods go now, and whether its old pod is a
// candidate for the rolling update. That is a node's fragment; it depends
// only on the node, its pods, MinReady, whether there is a topology, the
// node's backoff and the time, so a State keeps it from one plan to the
// next until one of those changes. The second phase (decide) spends the
// budgets over the sum of the fragments.

// tally is what one node adds to the counters, and their sum over nodes.
type tally struct {
	Desired, Current, Ready, Available, UpToDate, Old int
	Unschedulable, Updating, Misplaced, Surging       int
	SurgeEnding, IgnoredUnresponsive, InMaintenance   int
	Running                                           NodeCounts
	KeptNew, KeptOld                                  int
	// unavailable, schedulerFailures and inFlight are planner's: the
	// desired nodes without an available pod before the scheduler-failure
	// allowance, those the allowance may excuse, and the new pods created
	// but not ready yet.
	unavailable, schedulerFailures, inFlight int
}

// add adds o to t sign times: 1 to count a fragment, -1 to take it back.
func (t *tally) add(o *tally, sign int) {
	t.Desired += sign * o.Desired
	t.Current += sign * o.Current
	t.Ready += sign * o.Ready
	t.Available += sign * o.Available
	t.UpToDate += sign * o.UpToDate
	t.Old += sign * o.Old
	t.Unschedulable += sign * o.Unschedulable
	t.Updating += sign * o.Updating
	t.Misplaced += sign * o.Misplaced
	t.Surging += sign * o.Surging
	t.SurgeEnding += sign * o.SurgeEnding
	t.IgnoredUnresponsive += sign * o.IgnoredUnresponsive
	t.InMaintenance += sign * o.InMaintenance
	t.Running.Current += sign * o.Running.Current
	t.Running.Ready += sign * o.Running.Ready
	t.Running.Available += sign * o.Running.Available
	t.KeptNew += sign * o.KeptNew
	t.KeptOld += sign * o.KeptOld
	t.unavailable += sign * o.unavailable
	t.schedulerFailures += sign * o.schedulerFailures
	t.inFlight += sign * o.inFlight
}

// counts are the counters the tally holds as they are reported; the
// global phase adds Unavailable, Excused and Domains.
func (t *tally) counts() Counts {
	return Counts{
		Desired: t.Desired, Current: t.Current, Ready: t.Ready, Available: t.Available, UpToDate: t.UpToDate,
		Old: t.Old, Unschedulable: t.Unschedulable, Updating: t.Updating, Misplaced: t.Misplaced,
		Surging: t.Surging, SurgeEnding: t.SurgeEnding, IgnoredUnresponsive: t.IgnoredUnresponsive,
		InMaintenance: t.InMaintenance, Running: t.Running, KeptNew: t.KeptNew, KeptOld: t.KeptOld,
	}
}

// domainTally is what desired nodes add to their domain.
type domainTally struct {
	// desired, upToDate and unavailable count as Counts does;
	// schedulerFailures as tally does.
	desired, upToDate, unavailable, schedulerFailures int
	// old counts desired nodes still running an old pod; surgeEnding
	// those among them whose old pod goes with this plan: the domain is
	// done once it is gone.
	old, surgeEnding int
	// availableSince is when the last of its up-to-date pods became
	// available: the domain is done since then, when it is done.
	availableSince time.Time
}

func (d *domainTally) add(o *domainTally, sign int) {
	d.desired += sign * o.desired
	d.upToDate += sign * o.upToDate
	d.unavailable += sign * o.unavailable
	d.schedulerFailures += sign * o.schedulerFailures
	d.old += sign * o.old
	d.surgeEnding += sign * o.surgeEnding
}

// kind is a list of candidates the global phase draws from.
type kind int

const (
	// kindOldAvailable and kindOldUnavailable are desired nodes whose only pod is
	// old: the rolling update's candidates.
	kindOldAvailable kind = iota
	kindOldUnavailable
	// kindSurgeable are the nodes of kindOldAvailable with no pod terminating,
	// where a new pod may be created beside the old one.
	kindSurgeable
	// kindGateClosed are the desired nodes' old pods whose gate was closed for
	// an in-place update.
	kindGateClosed
	kinds
)

// class sorts candidates by what the global phase filters them on: whether
// they are updated in place, and whether they are returning (which lets
// them out of their domain's turn).
type class int

const (
	inPlaceClass   class = 1
	returningClass class = 2
	classes              = 4
)

func classOf(pod *Pod) class {
	var c class
	if pod.InPlace {
		c |= inPlaceClass
	}
	if pod.Returning {
		c |= returningClass
	}
	return c
}

// Sets of classes the global phase asks for.
var (
	anyClass     = []class{0, inPlaceClass, returningClass, inPlaceClass | returningClass}
	inPlaceOnly  = []class{inPlaceClass, inPlaceClass | returningClass}
	notInPlace   = []class{0, returningClass}
	notReturning = []class{0, inPlaceClass}
)

// fragment is what one node contributes to a plan.
type fragment struct {
	tally tally
	// deletes, reopen and failed are the node's own part of Plan.Delete,
	// Plan.Reopen and Plan.FailedNodes.
	deletes []Deletion
	reopen  []string
	failed  bool
	// requeueAt, when not zero, is when time alone changes the node's
	// part: Plan.RequeueAfter is the earliest over the nodes.
	requeueAt time.Time
	// empty: a desired node with no pod at all, where one is created.
	empty bool
	// lists says which candidate lists old, the node's old pod, is on.
	lists [kinds]bool
	old   Pod
	// domain is the node's domain with a topology, for desired nodes;
	// inDomain says whether dom counts there.
	domain   string
	inDomain bool
	dom      domainTally
}

// reset empties f, keeping the room its lists took.
func (f *fragment) reset() {
	*f = fragment{deletes: f.deletes[:0], reopen: f.reopen[:0]}
}

// acts reports whether the node has a part of its own in the plan.
func (f *fragment) acts() bool { return len(f.deletes)+len(f.reopen) > 0 || f.failed }

// observer computes fragments.
type observer struct {
	minReady time.Duration
	now      time.Time
	topology bool
	backoff  map[string]time.Time
	f        *fragment
	// cur is the domain tally of the desired node observed, nil when it
	// counts in no domain.
	cur *domainTally
}

func newObserver(in *Input, f *fragment) observer {
	return observer{minReady: in.Params.MinReady, now: in.Now, topology: in.Params.Topology != nil, backoff: in.BackoffUntil, f: f}
}

// observe computes the fragment of node, whose pods are pods, into o.f.
func (o *observer) observe(node *Node, pods []Pod) {
	f := o.f
	f.reset()
	o.cur = nil
	o.countNode(node, pods)
	if node.Unresponsive {
		switch {
		case node.Maintenance && node.ShouldContinueRunning:
			f.tally.InMaintenance++
		case node.ShouldRun && !node.Maintenance:
			f.tally.IgnoredUnresponsive++
		}
		return
	}
	if node.Maintenance {
		o.leaveInMaintenance(node, pods)
		return
	}
	if o.topology && node.ShouldRun && node.ShouldContinueRunning {
		f.domain, f.inDomain = node.Domain, true
		o.cur = &f.dom
	}
	var newPods, oldPods []Pod
	terminating, live := false, 0
	for _, pod := range pods {
		if pod.Terminating {
			terminating = true
			continue
		}
		live++
		o.count(pod)
		switch {
		case !node.ShouldContinueRunning:
			o.remove(pod, DeleteMisplaced)
			f.tally.Misplaced++
		case pod.New:
			newPods = append(newPods, pod)
		default:
			oldPods = append(oldPods, pod)
		}
	}
	// A node running two pods surges, whatever replica sets they belong
	// to: duplicates, a failed pod beside a live one, or two pods of other
	// replica sets (a canary that took a node mid-surge, a template
	// abandoned mid-surge). Unless counted as a surge below, its extra pods
	// are deleted with this plan: like a surge ending, the node holds its
	// place in the surge budget the other replica set sees until they are
	// gone, or that one would surge on a node of its own, past maxSurge.
	if live > 1 {
		defer func() {
			if f.tally.Surging+f.tally.SurgeEnding == 0 {
				f.tally.SurgeEnding++
			}
		}()
	}
	if !node.ShouldContinueRunning {
		return
	}
	if node.ShouldRun {
		f.tally.Desired++
	}
	// Duplicates go first, failed ones included: a failed pod is kept only
	// when it is the only pod of its kind on the node.
	newPod := o.keepBest(newPods)
	oldPod := o.keepBest(oldPods)
	if o.cur != nil {
		o.cur.desired++
		if oldPod != nil {
			o.cur.old++
		}
	}
	if o.handleFailed(node, newPod, oldPod) {
		return
	}
	if !node.ShouldRun {
		// A NoSchedule misfit: running pods stay, nothing is placed or
		// replaced. A surge the taint caught still ends, and holds its place
		// in the surge budget until it does.
		if oldPod != nil && oldPod.GateClosed {
			f.reopen = append(f.reopen, oldPod.Name)
		}
		if newPod != nil && oldPod != nil {
			switch {
			case o.available(newPod):
				o.remove(*oldPod, DeleteSurgeEnded)
				f.tally.SurgeEnding++
			case !o.available(oldPod):
				// Ends with this plan too, counted by the deferred
				// SurgeEnding above.
				o.remove(*oldPod, DeleteReplaced)
			default:
				f.tally.Surging++
			}
		}
		return
	}
	// A duplicate deleted now terminates: no new pod beside what is left
	// until it is gone.
	o.placeOnDesiredNode(newPod, oldPod, terminating || len(newPods) > 1 || len(oldPods) > 1)
}

// leaveInMaintenance leaves a node in maintenance with the agent it has:
// nothing is created, replaced or updated there, and nothing counts
// against the budgets. A surge the maintenance caught still ends, so that
// the node holds one agent: the new pod when it is available (the surge
// succeeded), else the old one it ran before; the others are deleted, and
// the node holds its place in the surge budget until they are gone. An
// old pod whose gate was closed for an in-place update is reopened: the
// update does not go on there.
func (o *observer) leaveInMaintenance(node *Node, pods []Pod) {
	f := o.f
	if node.ShouldContinueRunning {
		f.tally.InMaintenance++
	}
	var live []Pod
	for _, pod := range pods {
		if !pod.Terminating {
			live = append(live, pod)
		}
	}
	if len(live) > 1 {
		slices.SortFunc(live, o.compareForKeeping)
		keep := slices.IndexFunc(live, func(pod Pod) bool { return pod.New && o.available(&pod) })
		if keep < 0 {
			keep = max(0, slices.IndexFunc(live, func(pod Pod) bool { return !pod.New }))
		}
		for i, pod := range live {
			if i != keep {
				o.remove(pod, DeleteSurgeEnded)
			}
		}
		f.tally.SurgeEnding++
		live = live[keep : keep+1]
	}
	if len(live) == 1 && !live[0].New && live[0].GateClosed {
		f.reopen = append(f.reopen, live[0].Name)
	}
}

// placeOnDesiredNode decides for a node that should run a pod.
func (o *observer) placeOnDesiredNode(newPod, oldPod *Pod, terminating bool) {
	f := o.f
	switch {
	case newPod == nil && oldPod == nil:
		o.markUnavailable(nil)
		f.empty = !terminating
	case oldPod == nil:
		if o.available(newPod) {
			o.upToDate(newPod)
		} else {
			o.markUnavailable(newPod)
		}
	case newPod != nil:
		if o.available(newPod) {
			o.remove(*oldPod, DeleteSurgeEnded)
			f.tally.SurgeEnding++
			o.upToDate(newPod)
			if o.cur != nil {
				o.cur.surgeEnding++
			}
			return
		}
		if !o.available(oldPod) {
			o.markUnavailable(newPod)
			// Neither pod serves: deleting the old one costs nothing, and
			// keeping it would keep two agents on a node going down
			// (both marked not ready) past the unresponsive grace, which
			// leaves the node alone and out of the surge budget while
			// another node surges: back, it would surge too, past
			// maxSurge. The surge ends with this plan (SurgeEnding, from
			// observe).
			o.remove(*oldPod, DeleteReplaced)
			return
		}
		f.tally.Surging++
	case o.available(oldPod):
		f.lists[kindOldAvailable] = true
		f.lists[kindSurgeable] = !terminating
	case oldPod.Draining:
		// Its in-place update is under way; it goes on once drained.
		o.markUnavailable(nil)
	default:
		o.markUnavailable(nil)
		f.lists[kindOldUnavailable] = true
	}
	if oldPod != nil && oldPod.GateClosed {
		f.lists[kindGateClosed] = true
	}
	if oldPod != nil {
		f.old = *oldPod
	}
}

// handleFailed deletes the failed pod kept on a node (newPod or oldPod)
// once its backoff has ended. It reports whether the node waits: a failed
// pod is still in backoff or is being deleted now, so nothing else happens
// there in this step.
func (o *observer) handleFailed(node *Node, newPod, oldPod *Pod) bool {
	var failed []Pod
	var other *Pod
	for _, pod := range []*Pod{newPod, oldPod} {
		switch {
		case pod == nil:
		case pod.Failed:
			failed = append(failed, *pod)
		default:
			other = pod
		}
	}
	if len(failed) == 0 {
		return false
	}
	if node.ShouldRun && (other == nil || !o.available(other)) {
		if other != nil && other.New {
			o.markUnavailable(other)
		} else {
			o.markUnavailable(nil)
		}
	}
	if until, ok := o.backoff[node.Name]; ok && o.now.Before(until) {
		o.requeueAt(until)
		if newPod != nil && oldPod != nil {
			// The failed pod holds its place beside the other kind until
			// the backoff ends: a surge, for the surge budget.
			o.f.tally.Surging++
		}
		return true
	}
	for _, pod := range failed {
		o.remove(pod, DeleteFailed)
	}
	o.f.failed = true
	return true
}

// upToDate counts a desired node whose pod is an available new pod.
func (o *observer) upToDate(newPod *Pod) {
	o.f.tally.UpToDate++
	if d := o.cur; d != nil {
		d.upToDate++
		if at := newPod.ReadySince.Add(o.minReady); at.After(d.availableSince) {
			d.availableSince = at
		}
	}
}

// markUnavailable counts a desired node without an available pod; newPod
// is the node's new pod, if any.
func (o *observer) markUnavailable(newPod *Pod) {
	o.f.tally.unavailable++
	schedulerFailure := newPod != nil && newPod.Unschedulable
	if schedulerFailure {
		o.f.tally.schedulerFailures++
	}
	if d := o.cur; d != nil {
		d.unavailable++
		if schedulerFailure {
			d.schedulerFailures++
		}
	}
}

// countNode adds the node to the counters of nodes: Running when it is
// desired (it should run a pod, responsive, not in maintenance), KeptNew
// and KeptOld when it lets running pods stay but takes no new one.
func (o *observer) countNode(node *Node, pods []Pod) {
	c := &o.f.tally
	switch {
	case node.ShouldRun && !node.Unresponsive && !node.Maintenance:
		var current, ready, available bool
		for i := range pods {
			if pod := &pods[i]; !pod.Terminating && !pod.Failed {
				current = true
				ready = ready || pod.Ready()
				available = available || pod.Available(o.minReady, o.now)
			}
		}
		c.Running.Current += b2i(current)
		c.Running.Ready += b2i(ready)
		c.Running.Available += b2i(available)
	case !node.ShouldRun && node.ShouldContinueRunning:
		for i := range pods {
			switch pod := &pods[i]; {
			case pod.Terminating:
			case pod.New:
				c.KeptNew++
			case !pod.Failed:
				c.KeptOld++
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// count adds a live pod to the counters.
func (o *observer) count(pod Pod) {
	c := &o.f.tally
	if !pod.New {
		if !pod.Failed {
			c.Old++
		}
		return
	}
	c.Current++
	if pod.Unschedulable {
		c.Unschedulable++
	}
	if pod.Updating && !pod.Failed {
		c.Updating++
	}
	if pod.Ready() {
		c.Ready++
		if o.available(&pod) {
			c.Available++
		}
	} else if !pod.Failed {
		c.inFlight++
	}
}

// available reports whether pod is available now, and when it is ready but
// not yet available, asks to look again when it will be.
func (o *observer) available(pod *Pod) bool {
	if pod.Available(o.minReady, o.now) {
		return true
	}
	if pod.Ready() {
		o.requeueAt(pod.ReadySince.Add(o.minReady))
	}
	return false
}

// requeueAt asks to look at the node again at t.
func (o *observer) requeueAt(t time.Time) {
	if f := o.f; f.requeueAt.IsZero() || t.Before(f.requeueAt) {
		f.requeueAt = t
	}
}

// keepBest returns the pod to keep among pods of one kind on a node and
// deletes the others as duplicates.
func (o *observer) keepBest(pods []Pod) *Pod {
	if len(pods) == 0 {
		return nil
	}
	slices.SortFunc(pods, o.compareForKeeping)
	for _, dup := range pods[1:] {
		o.remove(dup, DeleteDuplicate)
	}
	return &pods[0]
}

// compareForKeeping orders the pod most worth keeping first: available,
// then ready, then scheduled, then unschedulable, then failed; then older,
// then by name for stability.
func (o *observer) compareForKeeping(a, b Pod) int {
	score := func(pod *Pod) int {
		switch {
		case pod.Available(o.minReady, o.now):
			return 0
		case pod.Ready():
			return 1
		case pod.Failed:
			return 4
		case !pod.Unschedulable:
			return 2
		default:
			return 3
		}
	}
	if d := score(&a) - score(&b); d != 0 {
		return d
	}
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

func (o *observer) remove(pod Pod, reason DeleteReason) {
	o.f.deletes = append(o.f.deletes, Deletion{Pod: pod.Name, Node: pod.Node, Reason: reason})
}

// nextChange is when time alone may change the fragment of a node whose
// pods are pods, seen at now: the first moment after now that a ready pod
// becomes available (which reorders duplicates as well as counts) or the
// node's backoff ends. Zero when no time does.
func nextChange(pods []Pod, backoffUntil time.Time, minReady time.Duration, now time.Time) time.Time {
	var next time.Time
	consider := func(t time.Time) {
		if now.Before(t) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for i := range pods {
		if pods[i].Ready() {
			consider(pods[i].ReadySince.Add(minReady))
		}
	}
	consider(backoffUntil)
	return next
}
