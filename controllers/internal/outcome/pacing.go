package outcome

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// defaultCounterWriteInterval is the least time between two status writes
// of an object that change only counters. During a rollout the counters
// move with every pod; written each time, they would cost a request per
// pod event, as many as the pod writes themselves. A reader (kubectl, a
// dashboard) needs them about every second; what gates Flux and Argo CD,
// the conditions and the roles, is written at once.
const defaultCounterWriteInterval = time.Second

// countersPerRollout is how many objects write counters during one
// rollout: the ExtendedDaemonSet, the replica set it leaves and the one it
// rolls out.
const countersPerRollout = 3

// CounterWriteInterval is the counter write interval for a client limited
// to qps requests a second: the counters of one rollout spend at most 1%
// of that budget together, and each object's are written at least a second
// apart. At a low QPS, which an operator sets to spare a busy API server,
// every status write is a pod write the rollout waits for.
func CounterWriteInterval(qps float32) time.Duration {
	if qps <= 0 {
		return defaultCounterWriteInterval
	}
	return max(defaultCounterWriteInterval, time.Duration(float64(countersPerRollout*100*time.Second)/float64(qps)))
}

// counterWriteDelay is how long a status change may wait before it is
// written: zero unless it changes counters only, else what is left of
// interval since the last write.
func counterWriteDelay(countersOnly bool, interval time.Duration, lastWrite, now time.Time) time.Duration {
	if !countersOnly {
		return 0
	}
	return max(0, lastWrite.Add(interval).Sub(now))
}

// ReplicaSetCountersOnly reports a status change of progress counters
// alone, and the progress time and mark that follow them, short of their final
// figures: counters that settle are what a reader waiting for the rollout's
// end waits on, and the replica set a rollout empties changes nothing else
// when it does. Desired is not progress: it changes when nodes move
// between replica sets (a canary starting, growing or failing) or join,
// and the ExtendedDaemonSet's sums and every "x of y" wait on it.
func ReplicaSetCountersOnly(before, after *v1alpha1.ExtendedDaemonSetReplicaSetStatus) bool {
	return countersOnly(before, after, countersSettled(after.Desired, after.Current, after.Ready, after.Available, after.UpToDate),
		func(st *v1alpha1.ExtendedDaemonSetReplicaSetStatus) {
			st.Current, st.Ready, st.Available, st.UpToDate = 0, 0, 0, 0
			st.LastProgressTime, st.ProgressMark = nil, nil
		})
}

// ExtendedDaemonSetCountersOnly reports a status change of progress
// counters alone, short of their final figures; as for a replica set, a
// change of Desired is not one.
func ExtendedDaemonSetCountersOnly(before, after *v1alpha1.ExtendedDaemonSetStatus) bool {
	return countersOnly(before, after, countersSettled(after.Desired, after.Current, after.Ready, after.Available, after.UpToDate),
		func(st *v1alpha1.ExtendedDaemonSetStatus) {
			st.Current, st.Ready, st.Available, st.UpToDate = 0, 0, 0, 0
			st.Domains = domainsWithoutCounters(st.Domains)
		})
}

// countersOnly reports whether before and after differ, and differ no more
// once withoutCounters has zeroed the counters of copies of both; never
// when the counters settled.
func countersOnly[S any](before, after *S, settled bool, withoutCounters func(*S)) bool {
	if settled {
		return false
	}
	b, a := *before, *after
	withoutCounters(&b)
	withoutCounters(&a)
	return !equality.Semantic.DeepEqual(before, after) && equality.Semantic.DeepEqual(b, a)
}

// domainsWithoutCounters is domains with their progress counts zeroed:
// their names, states, desired nodes and verdicts are what a reader waits
// on.
func domainsWithoutCounters(domains []v1alpha1.DomainStatus) []v1alpha1.DomainStatus {
	if domains == nil {
		return nil
	}
	out := make([]v1alpha1.DomainStatus, len(domains))
	for i, d := range domains {
		d.UpToDate, d.Unavailable = 0, 0
		out[i] = d
	}
	return out
}

// countersSettled: every pod wanted runs, ready, available and up to date,
// or none is left.
func countersSettled(desired int32, counts ...int32) bool {
	for _, c := range counts {
		if c != desired {
			return false
		}
	}
	return true
}

// StatusWrites remembers each object's last status write by this process:
// a restarted manager writes at once, which is safe.
type StatusWrites struct {
	at sync.Map // types.NamespacedName to lastWrite
	// Interval paces counter writes; zero means the default.
	Interval time.Duration
}

// lastWrite is when an object's status was last written, and the version
// that write replaced.
type lastWrite struct {
	at       time.Time
	replaced string
}

// Patch writes after's status, computed from before, in one request
// (PatchStatus), unless nothing changed or counters alone changed within
// the interval since the object's last write. It returns how long such a
// change may wait, and whether it wrote: what the status newly says is
// told by the caller once written, and only then.
//
// A before that is the very version this process's last write replaced
// comes from a cache that has not yet seen that write: its patch could
// only get a Conflict, a request spent for nothing. It waits instead for
// the watch event of the write, which wakes the object again, or
// StaleReadRetry.
func (w *StatusWrites) Patch(ctx context.Context, c client.Client, before, after client.Object, unchanged, countersOnly bool,
	now time.Time,
) (wait time.Duration, wrote bool, err error) {
	key := client.ObjectKeyFromObject(after)
	if unchanged {
		return 0, false, nil
	}
	if wait := w.hold(key, before.GetResourceVersion(), countersOnly, now); wait > 0 {
		return wait, false, nil
	}
	if err := PatchStatus(ctx, c, before, after); err != nil {
		return 0, false, err
	}
	w.wrote(key, before.GetResourceVersion(), now)
	return 0, true, nil
}

// hold is how long a status change of the object at key, read at version
// read, must wait before it is written: until the cache has seen the last
// write, and for counters alone, the rest of the interval.
func (w *StatusWrites) hold(key types.NamespacedName, read string, countersOnly bool, now time.Time) time.Duration {
	last := w.last(key)
	if last.replaced != "" && last.replaced == read {
		return StaleReadRetry
	}
	return counterWriteDelay(countersOnly, w.counterInterval(), last.at, now)
}

// wrote records a status write that replaced version replaced.
func (w *StatusWrites) wrote(key types.NamespacedName, replaced string, now time.Time) {
	w.at.Store(key, lastWrite{at: now, replaced: replaced})
}

func (w *StatusWrites) counterInterval() time.Duration {
	if w.Interval <= 0 {
		return defaultCounterWriteInterval
	}
	return w.Interval
}

func (w *StatusWrites) last(key types.NamespacedName) lastWrite {
	if l, ok := w.at.Load(key); ok {
		return l.(lastWrite)
	}
	return lastWrite{}
}

// Forget drops what is remembered of an object, once it is gone.
func (w *StatusWrites) Forget(key types.NamespacedName) { w.at.Delete(key) }
