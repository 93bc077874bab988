package controllers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/fluxevents"
)

// writePods carries out n pod writes (creations, deletions, patches), as
// many at once as writes may be; write does the i-th and says whether the
// API server carried it out. It returns how many it did, and every
// write's error: one refused write does not keep the others from going.
func (r *ReplicaSetReconciler) writePods(ctx context.Context, n int, write func(ctx context.Context, i int) (bool, error)) (int, error) {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(r.writeConcurrency())
	errs := make([]error, n)
	var done atomic.Int32
	for i := range n {
		g.Go(func() error {
			ok, err := write(ctx, i)
			if ok {
				done.Add(1)
			}
			errs[i] = err
			return nil
		})
	}
	_ = g.Wait()
	return int(done.Load()), errors.Join(errs...)
}

// refused handles a pod write that failed with err: one that may have
// been carried out all the same (mayHaveHappened) is expected as if done
// (mayHave records it), for a shorter while. It also tells, as a warning
// event on the replica set, why the API server refused the write (a quota,
// Pod Security admission, a webhook), in its own words, once per cause and
// interval: a refusal is retried at every reconcile and would otherwise
// flood the events.
func (r *ReplicaSetReconciler) refused(ers *v1alpha1.ExtendedDaemonSetReplicaSet, reason, action string, err error, mayHave func()) {
	if mayHaveHappened(err) {
		mayHave()
	}
	if r.refusals.allow(string(ers.UID)+"/"+reason+"/"+err.Error(), r.now()) {
		r.Recorder.Eventf(ers, nil, corev1.EventTypeWarning, reason, action, "the API server refused to %s a pod%v",
			strings.ToLower(action), fluxevents.Detail(err.Error()))
	}
}

// mayHaveHappened says whether a write that failed with err may have been
// carried out all the same. Only an answer of the client-error class (4xx)
// says the API server did not; a server error, a timeout or no answer at
// all (a connection lost) leaves it unknown, and the cache, which may lag
// behind the API server, cannot tell yet.
func mayHaveHappened(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	code := status.Status().Code
	return code < http.StatusBadRequest || code >= http.StatusInternalServerError
}

// withoutGeneratedName drops the name generated for a pod the API server
// then refused from err's message: every attempt gets a new one, and a
// message that changes at every retry would make every refusal a new cause
// and every status write a new one.
func withoutGeneratedName(err error) error {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return err
	}
	details := status.Status().Details
	if details == nil || details.Name == "" {
		return err
	}
	return &refusal{message: strings.ReplaceAll(err.Error(), fmt.Sprintf("%q ", details.Name), ""), err: err}
}

// refusal is an API server error with a message of its own.
type refusal struct {
	message string
	err     error
}

func (e *refusal) Error() string { return e.message }
func (e *refusal) Unwrap() error { return e.err }

func (r *ReplicaSetReconciler) writeConcurrency() int {
	if r.MaxConcurrentWrites > 0 {
		return r.MaxConcurrentWrites
	}
	return defaultMaxConcurrentWrites
}
