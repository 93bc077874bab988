package bench

import (
	"math"
	"testing"
	"time"
)

func TestQuantileInterpolatesWithinTheBucket(t *testing.T) {
	inf := math.Inf(1)
	base := histogram{bounds: []float64{0.1, 1, inf}, counts: []float64{5, 5, 5}}
	// Since base: 10 observations at most 0.1s, 10 between 0.1s and 1s.
	h := histogram{bounds: []float64{0.1, 1, inf}, counts: []float64{15, 25, 25}}.since(base)
	for _, tc := range []struct{ q, want float64 }{
		{0.5, 0.1},
		{0.25, 0.05},
		{0.75, 0.55},
		{0.99, 0.982},
	} {
		if got := h.quantile(tc.q); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("quantile(%g) = %g, want %g", tc.q, got, tc.want)
		}
	}
	if got := (histogram{bounds: []float64{0.1, inf}, counts: []float64{0, 4}}).quantile(0.5); got != 0.1 {
		t.Errorf("quantile in the +Inf bucket = %g, want the highest finite bound 0.1", got)
	}
	if got := base.since(base).quantile(0.5); !math.IsNaN(got) {
		t.Errorf("quantile without observations = %g, want NaN", got)
	}
}

func TestMedian(t *testing.T) {
	if got := median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("median of 3 = %g, want 2", got)
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median of 4 = %g, want 2.5", got)
	}
}

func TestWritesByKind(t *testing.T) {
	requests := counts{
		"create pods": 9, "create pods code=409": 1, "delete pods": 10, "patch pods": 5, "get pods": 100, "POST": 3,
		"update extendeddaemonsets/status": 3, "create extendeddaemonsetreplicasets": 1,
		"create events": 7, "patch events": 2, "watch events": 1,
	}
	pods, own, events := writesByKind(requests, []string{"extendeddaemonsets", "extendeddaemonsetreplicasets"})
	if pods != 25 || own != 4 || events != 9 {
		t.Errorf("writesByKind = %g pods, %g own, %g events; want 25, 4, 9", pods, own, events)
	}
}

func TestPeakRateCountsTheBusiestWindow(t *testing.T) {
	t0 := time.Unix(0, 0)
	r := &auditedRequests{}
	// 5 requests in the first second, 20 in [10s, 11s), 3 later.
	for i := range 5 {
		r.received = append(r.received, t0.Add(time.Duration(i)*100*time.Millisecond))
	}
	for i := range 20 {
		r.received = append(r.received, t0.Add(10*time.Second+time.Duration(i)*50*time.Millisecond))
	}
	for i := range 3 {
		r.received = append(r.received, t0.Add(30*time.Second+time.Duration(i)*time.Second))
	}
	if got := r.peakRate(time.Second); got != 20 {
		t.Errorf("peak over 1s = %g/s, want 20", got)
	}
	if got := r.peakRate(15 * time.Second); got != 25.0/15 {
		t.Errorf("peak over 15s = %g/s, want 25/15", got)
	}
}

func TestRequestKeyNamesFailures(t *testing.T) {
	for _, tc := range []struct{ verb, resource, subresource, code, want string }{
		{"create", "pods", "", "201", "create pods"},
		{"patch", "extendeddaemonsets", "status", "409", "patch extendeddaemonsets/status code=409"},
		{"POST", "", "", "500", "POST code=500"},
		{"GET", "", "", "200", "GET"},
	} {
		key := requestKey(tc.verb, tc.resource, tc.subresource, tc.code)
		if key != tc.want {
			t.Errorf("requestKey(%q, %q, %q, %q) = %q, want %q", tc.verb, tc.resource, tc.subresource, tc.code, key, tc.want)
		}
		if verb, resource := keyFields(key); verb != tc.verb || resource != tc.resource {
			t.Errorf("keyFields(%q) = %q, %q", key, verb, resource)
		}
	}
}

func TestCountsPlusAddsByKey(t *testing.T) {
	ours := counts{"delete pods": 10, "update extendeddaemonsets/status": 3}
	daemonSetController := counts{"create pods": 10, "update extendeddaemonsets/status": 0, "update daemonsets/status": 4}
	sum := ours.plus(daemonSetController)
	if sum.total() != 27 || sum["delete pods"] != 10 || sum["create pods"] != 10 || sum["update daemonsets/status"] != 4 {
		t.Errorf("plus = %v", sum)
	}
	if ours.total() != 13 {
		t.Errorf("plus changed its receiver: %v", ours)
	}
	if got := counts(nil).plus(nil); got == nil || got.total() != 0 {
		t.Errorf("nil plus nil = %v", got)
	}
}
