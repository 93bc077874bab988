package controllers

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// counterWriteInterval is the least time between two status writes of a
// replica set that change only counters. During a rollout the counters
// move with every pod; written each time, they would cost a request per
// pod event, as many as the pod writes themselves. A reader (kubectl, a
// dashboard) needs them about every second; what gates Flux and Argo CD,
// the conditions and the role, is written at once.
const counterWriteInterval = time.Second

// statusWriteDelay is how long a replica set's status change may wait
// before it is written: zero when a reader needs it now (role, generation,
// conditions) or when counterWriteInterval has passed since the last write,
// else what is left of that interval. It is never positive for an
// unchanged status: there is nothing to write.
func statusWriteDelay(before, after *v1alpha1.ExtendedDaemonSetReplicaSetStatus, lastWrite, now time.Time) time.Duration {
	if equality.Semantic.DeepEqual(before, after) || readerNeedsNow(before, after) {
		return 0
	}
	return max(0, lastWrite.Add(counterWriteInterval).Sub(now))
}

// readerNeedsNow reports a change in anything but the counters and the
// progress time that follows them.
func readerNeedsNow(before, after *v1alpha1.ExtendedDaemonSetReplicaSetStatus) bool {
	b, a := *before, *after
	for _, st := range []*v1alpha1.ExtendedDaemonSetReplicaSetStatus{&b, &a} {
		st.Desired, st.Current, st.Ready, st.Available, st.UpToDate = 0, 0, 0, 0, 0
		st.LastProgressTime = nil
	}
	return !equality.Semantic.DeepEqual(b, a)
}

// statusWrites remembers when each replica set's status was last written,
// by this process: a restarted manager writes at once, which is safe.
type statusWrites struct{ at sync.Map }

func (w *statusWrites) last(key types.NamespacedName) time.Time {
	if t, ok := w.at.Load(key); ok {
		return t.(time.Time)
	}
	return time.Time{}
}

func (w *statusWrites) wrote(key types.NamespacedName, now time.Time) { w.at.Store(key, now) }

func (w *statusWrites) forget(key types.NamespacedName) { w.at.Delete(key) }
