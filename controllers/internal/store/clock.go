package store

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
)

// Now reads c, or the real clock when c is nil: the one instant a pass
// decides at.
func Now(c clock.PassiveClock) time.Time {
	if c != nil {
		return c.Now()
	}
	return metav1.Now().Time
}
