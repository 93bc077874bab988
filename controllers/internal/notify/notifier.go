package notify

import (
	"context"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// GateKey names a gate of a canary instance: a webhook, its type, and for
// confirm-step the step it stands before.
type GateKey struct {
	Name string                     `json:"name"`
	Type v1alpha1.CanaryWebhookType `json:"type"`
	Step int32                      `json:"step,omitempty"`
}

func (k GateKey) String() string {
	return k.Name + "/" + string(k.Type) + "/" + strconv.Itoa(int(k.Step))
}

// Delivery is one request to a webhook of an ExtendedDaemonSet.
type Delivery struct {
	// EDS is the ExtendedDaemonSet; its namespace holds the request's
	// Secrets.
	EDS     types.NamespacedName
	Webhook *v1alpha1.CanaryWebhook
	Body    []byte
	ID      string
}

// Answer is how a delivery went: OK on a 2xx; otherwise Reason, a short
// fixed text (a status code, "host not allowed", "timed out"), never the
// answer's body. Failed is true when no answer came at all.
type Answer struct {
	OK     bool
	Failed bool
	Reason string
}

// Deliver sends a delivery and says how it went. It may take as long as
// the webhook's timeouts and retries allow: it never runs in a reconcile.
type Deliver func(ctx context.Context, d Delivery) Answer

// Options size the notifier; zero values mean the defaults.
type Options struct {
	// Workers bound the gates asked at once (16 when zero): a receiver that
	// hangs holds one of them, for its own timeouts at most.
	Workers int
	// QueueSize bounds the notifications waiting for one receiver (32
	// when zero); more are dropped, and counted.
	QueueSize int
}

// Notifier asks gates and tells notifications off the reconcile path. A
// gate is asked by one of a bounded pool of workers, one ask in flight per
// gate and canary instance; its answer is kept in memory and the
// ExtendedDaemonSet requeued through Requeues. Notifications go through a
// bounded queue per receiver, so a receiver that fails or hangs never
// delays another's. It sends only while started, and it is started only on
// the leader.
type Notifier struct {
	deliver Deliver
	opts    Options
	asks    chan ask
	// requeues is read by the controller (a source.Channel).
	requeues chan event.GenericEvent

	mu        sync.Mutex
	ctx       context.Context //nolint:containedctx // the Runnable's, for the senders started after Start
	gates     map[gateID]*gateState
	receivers map[receiverID]*receiver
}

type gateID struct {
	eds      types.NamespacedName
	instance string
	gate     GateKey
}

type gateState struct {
	inFlight bool
	answered bool
	answer   Answer
	at       time.Time
}

type ask struct {
	id       gateID
	delivery Delivery
}

type receiverID struct {
	eds     types.NamespacedName
	webhook string
}

type receiver struct {
	queue   []Delivery
	running bool
}

// New returns a Notifier that sends with deliver.
func New(deliver Deliver, opts Options) *Notifier {
	if opts.Workers <= 0 {
		opts.Workers = 16
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 32
	}
	deliveries()
	return &Notifier{
		deliver: deliver, opts: opts,
		asks:      make(chan ask, 4*opts.Workers),
		requeues:  make(chan event.GenericEvent, 1024),
		gates:     map[gateID]*gateState{},
		receivers: map[receiverID]*receiver{},
	}
}

// NeedLeaderElection: only the leader asks and tells, so a receiver hears
// each transition once however many replicas run.
func (n *Notifier) NeedLeaderElection() bool { return true }

// Start runs the gate workers and the notifications queued so far until
// ctx ends.
func (n *Notifier) Start(ctx context.Context) error {
	n.mu.Lock()
	n.ctx = ctx
	for id, r := range n.receivers {
		n.startReceiver(id, r)
	}
	n.mu.Unlock()
	var wg sync.WaitGroup
	for range n.opts.Workers {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case a := <-n.asks:
					n.askOnce(ctx, a)
				}
			}
		})
	}
	wg.Wait()
	return nil
}

// Requeues are the ExtendedDaemonSets whose gate just answered.
func (n *Notifier) Requeues() <-chan event.GenericEvent { return n.requeues }

// Answers are the latest answers of the gates of the canary instance of
// eds; the answers of its other instances are forgotten.
func (n *Notifier) Answers(eds types.NamespacedName, instance string) map[GateKey]Answer {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := map[GateKey]Answer{}
	for id, s := range n.gates {
		switch {
		case id.eds != eds:
		case id.instance != instance:
			if !s.inFlight {
				delete(n.gates, id)
			}
		case s.answered:
			out[id.gate] = s.answer
		}
	}
	return out
}

// Ask asks the gate of the canary instance of eds with d, unless an ask is
// in flight or the last answer is younger than interval. It never blocks:
// with every worker busy and the queue full, the gate is asked at a later
// pass.
func (n *Notifier) Ask(eds types.NamespacedName, instance string, gate GateKey, interval time.Duration, d Delivery, now time.Time) {
	id := gateID{eds, instance, gate}
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.gates[id]
	if s == nil {
		s = &gateState{}
		n.gates[id] = s
	}
	if s.inFlight || (s.answered && now.Sub(s.at) < interval) {
		return
	}
	deliveries().start(d)
	select {
	case n.asks <- ask{id, d}:
		s.inFlight = true
	default:
		deliveries().observe(d, outcomeDropped)
	}
}

func (n *Notifier) askOnce(ctx context.Context, a ask) {
	answer := n.deliver(ctx, a.delivery)
	deliveries().observe(a.delivery, outcomeOf(answer))
	n.mu.Lock()
	if s := n.gates[a.id]; s != nil {
		s.inFlight, s.answered, s.answer, s.at = false, true, answer, time.Now()
	}
	n.mu.Unlock()
	obj := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: a.id.eds.Namespace, Name: a.id.eds.Name}}
	select {
	case n.requeues <- event.GenericEvent{Object: obj}:
	default:
		// The controller is behind on requeues: the gate's interval
		// brings the ExtendedDaemonSet back all the same.
	}
}

// Tell queues d for its receiver, the webhook of eds it names; a full
// queue drops it, counted.
func (n *Notifier) Tell(eds types.NamespacedName, d Delivery) {
	id := receiverID{eds, d.Webhook.Name}
	n.mu.Lock()
	defer n.mu.Unlock()
	r := n.receivers[id]
	if r == nil {
		r = &receiver{}
		n.receivers[id] = r
	}
	deliveries().start(d)
	if len(r.queue) >= n.opts.QueueSize {
		deliveries().observe(d, outcomeDropped)
		return
	}
	r.queue = append(r.queue, d)
	if n.ctx != nil && !r.running {
		n.startReceiver(id, r)
	}
}

// startReceiver sends r's queue in order on a goroutine of its own, which
// ends when the queue is empty. n.mu is held.
func (n *Notifier) startReceiver(id receiverID, r *receiver) {
	if r.running || len(r.queue) == 0 {
		return
	}
	r.running = true
	ctx := n.ctx
	go func() {
		for {
			n.mu.Lock()
			if len(r.queue) == 0 || ctx.Err() != nil {
				r.running = false
				if len(r.queue) == 0 {
					delete(n.receivers, id)
				}
				n.mu.Unlock()
				return
			}
			d := r.queue[0]
			r.queue = r.queue[1:]
			n.mu.Unlock()
			deliveries().observe(d, outcomeOf(n.deliver(ctx, d)))
		}
	}()
}

// Forget drops what is kept of eds, deleted, its series included.
func (n *Notifier) Forget(eds types.NamespacedName) {
	deliveries().forget(eds)
	n.mu.Lock()
	defer n.mu.Unlock()
	for id, s := range n.gates {
		if id.eds == eds && !s.inFlight {
			delete(n.gates, id)
		}
	}
}
