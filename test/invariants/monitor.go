package invariants

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness"
)

// ControllerFieldManager is the field manager the controller writes with.
const ControllerFieldManager = controllers.FieldOwner

// timelineLength is how many of the latest entries a report shows.
const timelineLength = 400

// Options configures a Monitor.
type Options struct {
	// OnViolation is called once per violation, as it is found, from the
	// Monitor's own goroutines; never after Stop returns.
	OnViolation func(Violation)
	// Grace is the Checker's; DefaultGrace when zero.
	Grace time.Duration
	// DeadlineSlack is the Checker's; DefaultDeadlineSlack when zero.
	DeadlineSlack time.Duration
	// ReactionTime is the Checker's; DefaultReactionTime when zero.
	ReactionTime time.Duration
}

// Monitor feeds a Checker from watches of one namespace's pods and
// ExtendedDaemonSets and of every node.
type Monitor struct {
	cancel context.CancelFunc
	done   chan struct{}
	opts   Options

	mu       sync.Mutex
	checker  *Checker
	timeline []string
	events   int
	reported int
	stopped  bool
}

// Report is what a Monitor saw.
type Report struct {
	Violations []Violation
	// PodsCreated counts the pods created while the Monitor watched, keyed
	// "node/replicaSet".
	PodsCreated map[string]int
	// Events is the number of watch events seen.
	Events   int
	Timeline []string
}

// String is the violations then the timeline, for a failure message.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d violations in %d events\n", len(r.Violations), r.Events)
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "  %s\n", v)
	}
	fmt.Fprintf(&b, "timeline (last %d entries):\n", len(r.Timeline))
	for _, line := range r.Timeline {
		fmt.Fprintf(&b, "  %s\n", line)
	}
	return b.String()
}

// Start watches namespace and the nodes through cfg, which must be allowed
// to list and watch them, and returns once the initial state is known.
func Start(ctx context.Context, cfg *rest.Config, namespace string, opts Options) (*Monitor, error) {
	c, err := cache.New(cfg, cache.Options{
		Scheme:            harness.Scheme(),
		DefaultNamespaces: map[string]cache.Config{namespace: {}},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the monitor's cache: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m := &Monitor{cancel: cancel, done: make(chan struct{}), opts: opts, checker: NewChecker(ControllerFieldManager)}
	m.checker.Grace = opts.Grace
	m.checker.DeadlineSlack = opts.DeadlineSlack
	m.checker.ReactionTime = opts.ReactionTime
	m.checker.Note = m.note
	for _, obj := range []client.Object{&corev1.Node{}, &appsv1.DaemonSet{}, &v1alpha1.ExtendedDaemonSet{}, &corev1.Pod{}} {
		inf, err := c.GetInformer(runCtx, obj)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("watching %T: %w", obj, err)
		}
		if _, err := inf.AddEventHandler(m.handler()); err != nil {
			cancel()
			return nil, fmt.Errorf("watching %T: %w", obj, err)
		}
	}
	go func() { _ = c.Start(runCtx) }()
	syncCtx, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	if !c.WaitForCacheSync(syncCtx) {
		cancel()
		return nil, errors.New("the monitor's watches did not sync")
	}
	m.mu.Lock()
	m.checker.Synced()
	m.mu.Unlock()
	go m.tick(runCtx)
	return m, nil
}

func (m *Monitor) tick(ctx context.Context) {
	defer close(m.done)
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			m.apply(func(c *Checker) { c.Tick(now) })
		}
	}
}

func (m *Monitor) handler() toolscache.ResourceEventHandler {
	observe := func(obj any, deleted bool) {
		if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		now := time.Now()
		m.apply(func(c *Checker) {
			m.events++
			switch o := obj.(type) {
			case *corev1.Pod:
				c.Pod(o, deleted, now)
			case *corev1.Node:
				c.Node(o, deleted, now)
			case *v1alpha1.ExtendedDaemonSet:
				c.ExtendedDaemonSet(o, deleted, now)
			case *appsv1.DaemonSet:
				c.DaemonSet(o, deleted, now)
			}
		})
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { observe(obj, false) },
		UpdateFunc: func(_, obj any) { observe(obj, false) },
		DeleteFunc: func(obj any) { observe(obj, true) },
	}
}

// apply runs f on the checker, then tells of the violations it found.
func (m *Monitor) apply(f func(*Checker)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return
	}
	f(m.checker)
	all := m.checker.Violations()
	if m.opts.OnViolation != nil {
		for _, v := range all[m.reported:] {
			m.opts.OnViolation(v)
		}
	}
	m.reported = len(all)
}

// note keeps a timeline entry; m.mu is held.
func (m *Monitor) note(at time.Time, line string) {
	m.timeline = append(m.timeline, at.Format("15:04:05.000")+" "+line)
	if len(m.timeline) > 2*timelineLength {
		m.timeline = append(m.timeline[:0], m.timeline[len(m.timeline)-timelineLength:]...)
	}
}

// Unsettled lists the changes whose rollout has not ended yet (Ready,
// Stalled or waiting for a person), with how long until their deadline.
func (m *Monitor) Unsettled() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.checker.Unsettled(time.Now())
}

// Report returns what the Monitor has seen so far.
func (m *Monitor) Report() Report {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.report()
}

func (m *Monitor) report() Report {
	return Report{
		Violations:  m.checker.Violations(),
		PodsCreated: m.checker.PodsCreated(),
		Events:      m.events,
		Timeline:    append([]string(nil), m.timeline[max(0, len(m.timeline)-timelineLength):]...),
	}
}

// Stop ends the watches, settles the breaches still waiting out their
// grace, and returns what the Monitor saw.
func (m *Monitor) Stop() Report {
	// The watches of other kinds get their grace to explain a suspect.
	m.mu.Lock()
	wait := m.checker.Pending(time.Now())
	m.mu.Unlock()
	time.Sleep(wait)
	m.apply(func(c *Checker) { c.Flush(time.Now()) })
	m.mu.Lock()
	m.stopped = true
	m.mu.Unlock()
	m.cancel()
	<-m.done
	return m.Report()
}
