package fluxevents

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
)

// recordingSender records what it sends; block, when set, holds each send
// until it is closed, after saying on started that one began.
type recordingSender struct {
	sent    chan Event
	started chan struct{}
	block   chan struct{}
	err     error
}

func newRecordingSender() *recordingSender {
	return &recordingSender{sent: make(chan Event, 100), started: make(chan struct{}, 100)}
}

func (s *recordingSender) Send(e Event) error {
	s.started <- struct{}{}
	if s.block != nil {
		<-s.block
	}
	s.sent <- e
	return s.err
}

func event(reason string) Event {
	return Event{Regarding: corev1.ObjectReference{Kind: "ExtendedDaemonSet", Namespace: "ns", Name: "agent"}, Reason: reason}
}

func dropped() float64 { return testutil.ToFloat64(metrics().dropped) }

func sentWith(outcome string) float64 {
	return testutil.ToFloat64(metrics().sent.WithLabelValues(outcome))
}

// runQueue starts q and returns a function that stops it and waits until
// Start returned.
func runQueue(t *testing.T, q *Queue) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- q.Start(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	}
}

// A full queue drops what comes next, counts it, and keeps what it holds,
// which is sent in order once the worker runs.
func TestFullQueueDropsAndCounts(t *testing.T) {
	g := gomega.NewWithT(t)
	sender := newRecordingSender()
	q := NewQueue(sender, 2, time.Second, logr.Discard())
	droppedBefore, sentBefore := dropped(), sentWith(outcomeSuccess)
	for _, reason := range []string{"First", "Second", "Third", "Fourth", "Fifth"} {
		q.Enqueue(event(reason))
	}
	g.Expect(dropped() - droppedBefore).To(gomega.Equal(3.0))

	stop := runQueue(t, q)
	defer stop()
	g.Eventually(sender.sent).Should(gomega.Receive(gomega.HaveField("Reason", "First")))
	g.Eventually(sender.sent).Should(gomega.Receive(gomega.HaveField("Reason", "Second")))
	g.Consistently(sender.sent, 100*time.Millisecond).ShouldNot(gomega.Receive())
	g.Eventually(func() float64 { return sentWith(outcomeSuccess) - sentBefore }).Should(gomega.Equal(2.0))
}

// A send that fails is counted as a failure, and the next event goes on.
func TestFailedSendIsCounted(t *testing.T) {
	g := gomega.NewWithT(t)
	sender := newRecordingSender()
	sender.err = errors.New("connection refused")
	q := NewQueue(sender, 4, time.Second, logr.Discard())
	failedBefore := sentWith(outcomeFailure)
	stop := runQueue(t, q)
	defer stop()
	q.Enqueue(event("First"))
	q.Enqueue(event("Second"))
	g.Eventually(func() float64 { return sentWith(outcomeFailure) - failedBefore }).Should(gomega.Equal(2.0))
}

// Events queued when the manager stops are still sent, within the grace.
func TestStopDrainsTheQueue(t *testing.T) {
	g := gomega.NewWithT(t)
	sender := newRecordingSender()
	q := NewQueue(sender, 4, time.Second, logr.Discard())
	for _, reason := range []string{"First", "Second", "Third"} {
		q.Enqueue(event(reason))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g.Expect(q.Start(ctx)).To(gomega.Succeed())
	g.Expect(sender.sent).To(gomega.HaveLen(3))
}

// A send that hangs past the grace does not hold the manager's stop: Start
// returns after the grace, and what is still queued is counted as dropped.
func TestStopGivesUpAfterTheGrace(t *testing.T) {
	g := gomega.NewWithT(t)
	sender := newRecordingSender()
	sender.block = make(chan struct{})
	defer close(sender.block)
	const grace = 200 * time.Millisecond
	q := NewQueue(sender, 4, grace, logr.Discard())
	droppedBefore := dropped()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = q.Start(ctx)
	}()
	q.Enqueue(event("Hangs"))
	g.Eventually(sender.started).Should(gomega.Receive())
	q.Enqueue(event("Queued"))
	q.Enqueue(event("AlsoQueued"))
	stopping := time.Now()
	cancel()
	g.Eventually(done, 2*grace).Should(gomega.BeClosed())
	g.Expect(time.Since(stopping)).To(gomega.BeNumerically(">=", grace))
	g.Expect(dropped() - droppedBefore).To(gomega.Equal(2.0))
}
