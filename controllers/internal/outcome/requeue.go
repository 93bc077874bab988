package outcome

import "time"

// Soonest is the shorter of two waits, where zero means no wait is needed.
func Soonest(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	default:
		return min(a, b)
	}
}
