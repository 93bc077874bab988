package fluxevents

import (
	"context"
	"time"

	"github.com/go-logr/logr"
)

const (
	// DefaultQueueSize bounds the events waiting to be sent: a burst of
	// transitions fits, a notification-controller down for long does not
	// hold the memory of every event since.
	DefaultQueueSize = 1024
	// DefaultShutdownGrace is how long a stopping manager goes on sending
	// what is queued, well within the pod's termination grace period.
	DefaultShutdownGrace = 5 * time.Second
)

// Sender sends one event; it may take long (retries), never forever.
type Sender interface {
	Send(Event) error
}

// Queue holds the events waiting to be sent and sends them, one at a time,
// from one worker. It is a manager Runnable that needs leader election:
// only the leader sends.
type Queue struct {
	events chan Event
	sender Sender
	grace  time.Duration
	log    logr.Logger
}

// NewQueue returns a queue of size events (DefaultQueueSize when not
// positive) for sender, which sends for at most grace (DefaultShutdownGrace
// when not positive) once its context is done.
func NewQueue(sender Sender, size int, grace time.Duration, log logr.Logger) *Queue {
	if size <= 0 {
		size = DefaultQueueSize
	}
	if grace <= 0 {
		grace = DefaultShutdownGrace
	}
	metrics()
	return &Queue{events: make(chan Event, size), sender: sender, grace: grace, log: log}
}

// Enqueue puts e on the queue, or drops and counts it when the queue is
// full. It never waits.
func (q *Queue) Enqueue(e Event) {
	select {
	case q.events <- e:
	default:
		metrics().dropped.Inc()
	}
}

// NeedLeaderElection says that only the leader sends.
func (q *Queue) NeedLeaderElection() bool { return true }

// Start sends queued events until ctx is done, then what is still queued
// for at most the grace period; what is left then is dropped and counted.
// A send in flight at the end of the grace is abandoned: the manager stops
// regardless.
func (q *Queue) Start(ctx context.Context) error {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.work(ctx, stop)
	}()
	<-ctx.Done()
	select {
	case <-done:
	case <-time.After(q.grace):
		close(stop)
		left := q.dropQueued()
		q.log.Info("stopped sending events to the notification-controller", "grace", q.grace, "dropped", left)
	}
	return nil
}

// dropQueued empties the queue, counting what it held as dropped. The
// worker may be taking the last ones meanwhile: each is either sent or
// dropped, never both.
func (q *Queue) dropQueued() int {
	n := 0
	for {
		select {
		case <-q.events:
			metrics().dropped.Inc()
			n++
		default:
			return n
		}
	}
}

// work sends until ctx is done, then drains the queue until it is empty or
// stop closes (Start drops the rest).
func (q *Queue) work(ctx context.Context, stop <-chan struct{}) {
	for {
		select {
		case e := <-q.events:
			q.send(e)
		case <-ctx.Done():
			q.drain(stop)
			return
		}
	}
}

func (q *Queue) drain(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		select {
		case e := <-q.events:
			q.send(e)
		default:
			return
		}
	}
}

func (q *Queue) send(e Event) {
	// The sender logs why a send failed.
	if err := q.sender.Send(e); err != nil {
		metrics().sent.WithLabelValues(outcomeFailure).Inc()
		return
	}
	metrics().sent.WithLabelValues(outcomeSuccess).Inc()
}
