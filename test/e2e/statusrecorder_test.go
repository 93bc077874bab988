package e2e

// The status recorder keeps what GitOps tools would have read from an
// ExtendedDaemonSet at every moment of a rollout.

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// statusSample is one version of an ExtendedDaemonSet as kstatus and a
// person read it.
type statusSample struct {
	Status status.Status
	// Reconciling is the reason of the Reconciling condition when it is
	// True, empty otherwise.
	Reconciling string
	// Canary is status.canary, nil without a canary.
	Canary *v1alpha1.CanaryStatus
}

// statusRecorder watches one ExtendedDaemonSet and computes a statusSample
// for every version the API server stored, so a short-lived state is seen
// even when a poller would have missed it.
type statusRecorder struct {
	watcher *watchtools.RetryWatcher
	done    chan struct{}

	mu      sync.Mutex
	samples []statusSample
	err     error
}

var edsResource = v1alpha1.GroupVersion.WithResource("extendeddaemonsets")

// recordStatus starts recording the ExtendedDaemonSet name in namespace.
func recordStatus(ctx context.Context, namespace, name string) (*statusRecorder, error) {
	client := env.Dynamic.Resource(edsResource).Namespace(namespace)
	selector := fields.OneTermEqualSelector("metadata.name", name).String()
	list, err := client.List(ctx, metav1.ListOptions{FieldSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("listing ExtendedDaemonSets: %w", err)
	}
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, list.GetResourceVersion(), &toolscache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = selector
			return client.Watch(ctx, opts)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("watching ExtendedDaemonSet: %w", err)
	}
	r := &statusRecorder{watcher: rw, done: make(chan struct{})}
	for i := range list.Items {
		r.add(&list.Items[i])
	}
	go r.follow()
	return r, nil
}

// Stop ends the watch and returns the samples, in order.
func (r *statusRecorder) Stop() ([]statusSample, error) {
	r.watcher.Stop()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.samples, r.err
}

func (r *statusRecorder) follow() {
	defer close(r.done)
	for ev := range r.watcher.ResultChan() {
		switch ev.Type {
		case watch.Added, watch.Modified:
			if u, ok := ev.Object.(*unstructured.Unstructured); ok {
				r.add(u)
			}
		case watch.Error:
			r.mu.Lock()
			r.err = fmt.Errorf("ExtendedDaemonSet watch failed: %w", apierrors.FromObject(ev.Object))
			r.mu.Unlock()
		}
	}
}

func (r *statusRecorder) add(u *unstructured.Unstructured) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, err := status.Compute(u)
	if err != nil {
		r.err = err
		return
	}
	sample := statusSample{Status: res.Status}
	if cond, found := conditionOf(u, v1alpha1.ReconcilingCondition); found && cond["status"] == string(metav1.ConditionTrue) {
		sample.Reconciling, _ = cond["reason"].(string)
	}
	if c, found, _ := unstructured.NestedMap(u.Object, "status", "canary"); found {
		sample.Canary = &v1alpha1.CanaryStatus{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(c, sample.Canary); err != nil {
			r.err = fmt.Errorf("reading status.canary: %w", err)
			return
		}
	}
	r.samples = append(r.samples, sample)
}

// conditionOf finds a condition in an object's status.
func conditionOf(u *unstructured.Unstructured, condType string) (map[string]any, bool) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == condType {
			return m, true
		}
	}
	return nil, false
}
