package controllers

import (
	"sync"
	"time"
)

// refusalInterval is how often one cause of refused writes is told again.
const refusalInterval = time.Minute

// maxRefusalCauses bounds the causes remembered; past it, the ones not
// told within the interval are forgotten.
const maxRefusalCauses = 1024

// onceEvery lets one event per key through per interval.
type onceEvery struct {
	mu       sync.Mutex
	interval time.Duration
	last     map[string]time.Time
}

func newOnceEvery(interval time.Duration) *onceEvery {
	return &onceEvery{interval: interval, last: map[string]time.Time{}}
}

// allow reports whether key may be told at now, and if so remembers it.
func (o *onceEvery) allow(key string, now time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if at, ok := o.last[key]; ok && now.Sub(at) < o.interval {
		return false
	}
	if len(o.last) >= maxRefusalCauses {
		for k, at := range o.last {
			if now.Sub(at) >= o.interval {
				delete(o.last, k)
			}
		}
	}
	o.last[key] = now
	return true
}
