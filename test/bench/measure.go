package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// pollEvery is how often a rollout's status is read.
	pollEvery = 250 * time.Millisecond
	// stallTimeout fails a rollout whose status has not changed for that
	// long: at 20 QPS a thousand nodes take minutes, but never without a
	// status change.
	stallTimeout = 3 * time.Minute
	// quietFor is how long a controller must send nothing for its work on
	// a rollout to be over: the events it records go out after the status
	// that ends the rollout. quietAtMost bounds the wait for a controller
	// that polls.
	quietFor    = 2 * time.Second
	quietAtMost = 30 * time.Second
	// clearTimeout bounds the deletion of a run's pods.
	clearTimeout = 5 * time.Minute
)

// errStalled says a rollout stopped making progress.
var errStalled = errors.New("rollout stalled")

// measure runs scenario sc once with controller c in a namespace of its
// own, and deletes the agent and its pods afterwards.
func (e *environment) measure(ctx context.Context, sc scenario, c *controller, rep int) (*run, error) {
	ns := fmt.Sprintf("%s-%s-%d", sc.name, c.name, rep)
	if err := e.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return nil, fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	w := c.newWorkload(sc)
	r, err := e.measureIn(ctx, ns, sc, c, w)
	if r != nil {
		r.Scenario, r.Controller, r.Rep = sc.name, c.name, rep
	}
	// The next run starts on empty nodes, whatever became of this one.
	return r, errors.Join(err, e.clear(ctx, ns, w))
}

func (e *environment) measureIn(ctx context.Context, ns string, sc scenario, c *controller, w workload) (*run, error) {
	if c.name == ours {
		e.memory.phase(ns + "-before")
		defer e.memory.phase(ns + "-after")
	}
	if sc.update {
		if err := w.create(ctx, ns, sc, "v1"); err != nil {
			return nil, err
		}
		if err := waitRollout(ctx, w); err != nil {
			return nil, fmt.Errorf("rolling out the first version: %w", err)
		}
	}
	// What the controller still does for the first version is no part of
	// the measurement.
	if err := c.waitQuiet(ctx); err != nil {
		return nil, err
	}
	podsBefore, err := e.podsByUID(ctx, ns)
	if err != nil {
		return nil, err
	}
	before, err := e.startMeasurement(ctx, c)
	if err != nil {
		return nil, err
	}

	stopProfiling := func() error { return nil }
	if c.name == ours {
		e.memory.phase(ns)
		stopProfiling = e.profiler.during(ctx, ns)
	}
	start := time.Now()
	if sc.update {
		err = w.setImage(ctx, "v2")
	} else {
		err = w.create(ctx, ns, sc, "v1")
	}
	if err != nil {
		return nil, err
	}
	err = waitRollout(ctx, w)
	wall := time.Since(start)
	err = errors.Join(err, stopProfiling())
	if sc.inPlace && errors.Is(err, errStalled) {
		return &run{NotAvailable: fmt.Sprintf("in-place update did not finish (%v)", err)}, nil
	}
	if err != nil {
		return nil, err
	}
	if err := c.waitQuiet(ctx); err != nil {
		return nil, err
	}
	r, err := e.endMeasurement(ctx, sc, c, before, wall)
	if err != nil {
		return nil, err
	}
	if sc.inPlace {
		r.NotAvailable, err = e.replacedPods(ctx, ns, podsBefore)
	}
	return r, err
}

// waitRollout waits until w's rollout is done, or errStalled when its
// status stays the same for stallTimeout.
func waitRollout(ctx context.Context, w workload) error {
	var last rolloutState
	lastChange := time.Now()
	err := wait.PollUntilContextCancel(ctx, pollEvery, true, func(ctx context.Context) (bool, error) {
		state, err := w.rollout(ctx)
		if err != nil {
			return false, err
		}
		if state.summary != last.summary {
			last, lastChange = state, time.Now()
		}
		if time.Since(lastChange) > stallTimeout {
			return false, fmt.Errorf("%w for %s at %s", errStalled, stallTimeout, state.summary)
		}
		return state.done, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the rollout (last seen: %s): %w", last.summary, err)
	}
	return nil
}

// waitQuiet waits until c has sent no request for quietFor, or
// quietAtMost has passed.
func (c *controller) waitQuiet(ctx context.Context) error {
	return c.waitQuietFor(ctx, quietFor, quietAtMost)
}

// waitQuietFor waits until c has sent no request for quietFor, or atMost
// has passed.
func (c *controller) waitQuietFor(ctx context.Context, quietFor, atMost time.Duration) error {
	deadline := time.Now().Add(atMost)
	last, err := c.requestsSent(ctx)
	if err != nil {
		return err
	}
	lastChange := time.Now()
	for time.Now().Before(deadline) && time.Since(lastChange) < quietFor {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(quietFor / 4):
		}
		sent, err := c.requestsSent(ctx)
		if err != nil {
			return err
		}
		if sent != last {
			last, lastChange = sent, time.Now()
		}
	}
	return nil
}

// podsByUID lists the pods of namespace by UID.
func (e *environment) podsByUID(ctx context.Context, ns string) (map[string]corev1.Pod, error) {
	var pods corev1.PodList
	if err := e.client.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing the pods of %s: %w", ns, err)
	}
	out := make(map[string]corev1.Pod, len(pods.Items))
	for _, p := range pods.Items {
		out[string(p.UID)] = p
	}
	return out, nil
}

// replacedPods says why in-place updates are not available when the
// rollout replaced the pods instead of patching them; empty when it
// patched them.
func (e *environment) replacedPods(ctx context.Context, ns string, before map[string]corev1.Pod) (string, error) {
	after, err := e.podsByUID(ctx, ns)
	if err != nil {
		return "", err
	}
	kept := 0
	for uid := range after {
		if _, ok := before[uid]; ok {
			kept++
		}
	}
	// A few pods may be replaced for other reasons; most must be kept.
	if kept*2 >= len(before) {
		return "", nil
	}
	return fmt.Sprintf("in-place update not available: %d of %d pods were replaced, not patched", len(before)-kept, len(before)), nil
}

// clear deletes the agent and, once nothing would recreate them, its pods
// at once: the garbage collector, rate limited like the controllers,
// would take minutes for a thousand of them.
func (e *environment) clear(ctx context.Context, ns string, w workload) error {
	if err := w.deleteAll(ctx); err != nil {
		return err
	}
	// One request deletes every pod; past about 10,000 of them the API
	// server ends it at its request timeout (a stream error) having
	// deleted some: the next one goes on from there.
	var deleteErr error
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, clearTimeout, true, func(ctx context.Context) (bool, error) {
		deleteErr = e.client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.GracePeriodSeconds(0))
		var pods corev1.PodList
		if err := e.client.List(ctx, &pods, client.InNamespace(ns)); err != nil {
			return false, err
		}
		return len(pods.Items) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("deleting the pods of %s: %w", ns, errors.Join(err, deleteErr))
	}
	return nil
}
