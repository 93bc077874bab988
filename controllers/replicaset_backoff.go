package controllers

import (
	"sync"
	"time"
)

// Failed pods are replaced after a per-node delay that doubles with every
// failure, as upstream does, so a pod that fails at once does not turn into
// a create/delete loop against the API server.
const (
	failedPodInitialBackoff = time.Second
	failedPodMaxBackoff     = 5 * time.Minute
)

// failureBackoff is the per-node delay before a failed pod is replaced. It
// lives in memory: a restart only makes the next replacement immediate.
type failureBackoff struct {
	mu      sync.Mutex
	entries map[string]backoffEntry
}

type backoffEntry struct {
	delay time.Duration
	until time.Time
}

func newFailureBackoff() *failureBackoff {
	return &failureBackoff{entries: map[string]backoffEntry{}}
}

// Until returns, for each key that is in backoff at now, when it ends.
func (b *failureBackoff) Until(keys []string, now time.Time) map[string]time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]time.Time{}
	for _, k := range keys {
		if e, ok := b.entries[k]; ok && now.Before(e.until) {
			out[k] = e.until
		}
	}
	return out
}

// Next starts the next, longer, backoff period of key. An entry idle for
// twice the longest delay starts again from the shortest.
func (b *failureBackoff) Next(key string, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	switch {
	case !ok || now.Sub(e.until) > 2*failedPodMaxBackoff:
		e.delay = failedPodInitialBackoff
	default:
		e.delay = min(2*e.delay, failedPodMaxBackoff)
	}
	e.until = now.Add(e.delay)
	b.entries[key] = e
	for k, old := range b.entries {
		if now.Sub(old.until) > 2*failedPodMaxBackoff {
			delete(b.entries, k)
		}
	}
}
