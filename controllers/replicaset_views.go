package controllers

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/store"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// DefaultViewCheckInterval is how often a view kept from pass to pass is
// stated afresh and compared with what it had become: a watch event the
// journal missed, or a field a statement reads that no event predicate
// watches, would otherwise stay wrong until the replica set's next change.
const DefaultViewCheckInterval = 5 * time.Minute

// replicaSetViews keeps, per replica set, the views its passes state node
// by node: its own, and the other replica set's while a canary runs (what
// that one spends of the shared budgets).
type replicaSetViews struct {
	mu sync.Mutex
	m  map[types.NamespacedName]*keptViews
}

type keptViews struct {
	own, other *view
}

func (vs *replicaSetViews) of(ers types.NamespacedName) *keptViews {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if vs.m == nil {
		vs.m = map[types.NamespacedName]*keptViews{}
	}
	k := vs.m[ers]
	if k == nil {
		k = &keptViews{}
		vs.m[ers] = k
	}
	return k
}

// otherOf is where the pass of the replica set k is kept for keeps its view
// of the replica set beside it, other, stated for key: that one's own view
// when it is stated for the same key (a canary's view, seen from the
// active replica set, is the canary's own), else k's. Both passes hold the
// ExtendedDaemonSet's lock, so one view serves both.
func (vs *replicaSetViews) otherOf(k *keptViews, other types.NamespacedName, key string) **view {
	vs.mu.Lock()
	o := vs.m[other]
	vs.mu.Unlock()
	if o != nil && o.own != nil && o.own.spec.key == key {
		k.other = nil
		return &o.own
	}
	return &k.other
}

func (vs *replicaSetViews) forget(ers types.NamespacedName) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	delete(vs.m, ers)
}

// nodeSource is where a pass reads nodes and pods: the informers' stores.
type nodeSource interface {
	AllNodes(ctx context.Context) ([]*corev1.Node, error)
	PodsOf(ctx context.Context, namespace, eds string) ([]*corev1.Pod, error)
	PodsOn(namespace, eds, node string) ([]*corev1.Pod, error)
	Node(name string) (*corev1.Node, error)
}

// stater states views for one ExtendedDaemonSet's pass: it reads the
// journal and the cache, and applies the expectations.
type stater struct {
	source       nodeSource
	journal      *store.Journal
	expectations *store.Expectations
	eds          *v1alpha1.ExtendedDaemonSet
	now          time.Time
	// checkEvery is how often a kept view is stated afresh (check).
	checkEvery time.Duration
	// mismatch is told of a kept view found wrong by the check.
	mismatch func(spec viewSpec, diff string)
	// checked are the kept views the check replaced this pass, by key,
	// as they had become: checkPlanner checks their planner state.
	checked map[string]*view
}

// update brings the kept view *kept up to date for spec, stating again only
// the nodes changed since its last pass, or every node when the spec
// changed, the journal lost track, or the check is due (then comparing).
func (s *stater) update(ctx context.Context, kept **view, spec viewSpec) (*view, error) {
	owner := edsKey(s.eds)
	changed, cursor, complete := s.journal.Since(owner.String(), (*kept).cursorOrZero())
	v := *kept
	fresh := v == nil || !complete || v.spec.key != spec.key
	check := !fresh && s.now.Sub(v.checkedAt) >= s.checkEvery
	if check {
		// What the kept view became, then what it should be.
		v.spec = spec
		if err := s.changedOnly(v, changed); err != nil {
			return nil, err
		}
	}
	if fresh || check {
		f, err := s.afresh(ctx, spec)
		if err != nil {
			return nil, err
		}
		f.cursor, f.checkedAt = cursor, s.now
		if check {
			if diff := v.differs(f); diff != "" && s.mismatch != nil {
				s.mismatch(spec, diff)
			}
			if s.checked == nil {
				s.checked = map[string]*view{}
			}
			s.checked[spec.key] = v
		}
		*kept = f
		return f, nil
	}
	v.spec = spec
	if err := s.changedOnly(v, changed); err != nil {
		return nil, err
	}
	v.cursor = cursor
	return v, nil
}

// checkPlanner checks, when the check replaced the kept view v now is,
// the planner state that view had kept against a full plan of what it
// held, with in's parameters: the check of the views says the nodes were
// stated right, this that the planner summed them right.
func (s *stater) checkPlanner(v *view, in rollout.Input) {
	old := s.checked[v.spec.key]
	if old == nil {
		return
	}
	if err := old.state.Check(in); err != nil && s.mismatch != nil {
		s.mismatch(v.spec, err.Error())
	}
}

func (v *view) cursorOrZero() store.Cursor {
	if v == nil {
		return store.Cursor{}
	}
	return v.cursor
}

// afresh states every node for spec.
func (s *stater) afresh(ctx context.Context, spec viewSpec) (*view, error) {
	nodes, err := s.source.AllNodes(ctx)
	if err != nil {
		return nil, err
	}
	cached, err := s.source.PodsOf(ctx, s.eds.Namespace, s.eds.Name)
	if err != nil {
		return nil, err
	}
	v := newView(spec)
	owner := edsKey(s.eds)
	v.pending = setOf(s.expectations.Nodes(owner))
	v.restate(nil, nodes, s.expectations.Apply(owner, cached, s.now), s.now)
	return v, nil
}

// changedOnly states again the nodes changed, those the expectations
// change now or changed at the last pass, and those not Ready.
func (s *stater) changedOnly(v *view, changed map[string]bool) error {
	owner := edsKey(s.eds)
	pending := setOf(s.expectations.Nodes(owner))
	names := make(map[string]bool, len(changed)+len(pending)+len(v.pending)+len(v.notReady))
	for _, set := range []map[string]bool{changed, pending, v.pending, v.notReady} {
		maps.Copy(names, set)
	}
	v.pending = pending
	var nodes []*corev1.Node
	var cached []*corev1.Pod
	for name := range names {
		node, err := s.source.Node(name)
		if err != nil {
			return fmt.Errorf("reading node %s: %w", name, err)
		}
		if node != nil {
			nodes = append(nodes, node)
		}
		pods, err := s.source.PodsOn(s.eds.Namespace, s.eds.Name, name)
		if err != nil {
			return err
		}
		cached = append(cached, pods...)
	}
	// Every pod the expectations name is on a node of names, so they do
	// with these pods what they would with all of them; one created since
	// they were read stays for the next pass.
	pods := slices.DeleteFunc(s.expectations.Apply(owner, cached, s.now), func(p *corev1.Pod) bool { return !names[placement.TargetNode(p)] })
	v.restate(names, nodes, pods, s.now)
	return nil
}

func setOf(names []string) map[string]bool {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return set
}

// differs says how v states the nodes unlike want, empty when it does not.
func (v *view) differs(want *view) string {
	var diffs []string
	if v.fitting != want.fitting {
		diffs = append(diffs, fmt.Sprintf("fitting %d, want %d", v.fitting, want.fitting))
	}
	names := slices.Sorted(maps.Keys(v.at))
	for name := range want.at {
		if _, ok := v.at[name]; !ok {
			names = append(names, name)
		}
	}
	for _, name := range names {
		i, ok := v.at[name]
		j, wantOK := want.at[name]
		switch {
		case !ok:
			diffs = append(diffs, "node "+name+" missing")
		case !wantOK:
			diffs = append(diffs, "node "+name+" left over")
		case !reflect.DeepEqual(v.nodes[i], want.nodes[j]):
			diffs = append(diffs, fmt.Sprintf("node %s is %+v, want %+v", name, v.nodes[i], want.nodes[j]))
		case !reflect.DeepEqual(v.pods[name], want.pods[name]):
			diffs = append(diffs, fmt.Sprintf("pods on %s are %+v, want %+v", name, v.pods[name], want.pods[name]))
		}
		if len(diffs) >= 3 {
			break
		}
	}
	return strings.Join(diffs, "; ")
}

// viewKey identifies what a view of a replica set of eds states besides
// the nodes and pods: the replica set and its template, its role and the
// canary's nodes, whether it takes pods back (returning) and which, those
// it updates in place, the topology key and the unresponsive grace.
func viewKey(eds *v1alpha1.ExtendedDaemonSet, ers *v1alpha1.ExtendedDaemonSetReplicaSet, role v1alpha1.ReplicaSetRole,
	returning bool, updatable map[string]bool, grace time.Duration,
) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%d/%s|eds %d|%s|%s|%v", ers.UID, ers.Generation, ers.Name, eds.Generation, role, topologyKey(eds), grace)
	if c := canary.Running(eds); c != nil {
		fmt.Fprintf(&b, "|canary %s %s", c.ReplicaSet, strings.Join(c.Nodes, ","))
	}
	if returning {
		b.WriteString("|returning")
		if c := eds.Status.Canary; c != nil && c.Failed {
			fmt.Fprintf(&b, " failed %s", c.ReplicaSet)
		}
		if ers.Status.ActiveSince != nil {
			fmt.Fprintf(&b, " active since %s", ers.Status.ActiveSince.UTC().Format(time.RFC3339Nano))
		}
	}
	if len(updatable) > 0 {
		fmt.Fprintf(&b, "|in place %s", strings.Join(slices.Sorted(maps.Keys(updatable)), ","))
	}
	return b.String()
}

// reportMismatch is the stater's mismatch for the reconciler: a kept view
// found wrong is an error of this controller (a missed event, a predicate
// that drops a change a statement reads); the view is replaced by the
// fresh one either way.
func reportMismatch(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet) func(viewSpec, string) {
	return func(spec viewSpec, diff string) {
		replicaSetViewMismatches().Inc()
		ctrl.LoggerFrom(ctx).Error(nil, "the nodes kept from pass to pass differed from the cache; stated afresh",
			"replicaSet", spec.name, "role", spec.role, "extendedDaemonSet", eds.Name, "difference", diff)
	}
}

var _ nodeSource = (*store.Store)(nil)
