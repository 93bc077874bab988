package canary

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// benchSizes are a large cluster and five times that: the ratio of the two
// timings tells a linear step from one that is not.
var benchSizes = []int{1000, 5000}

// benchZones spread the candidates, and the canary over them, as
// nodeAntiAffinityKeys on the zone label would.
var benchZones = []string{"a", "b", "c", "d", "e"}

// benchAtSizes runs bench as one sub-benchmark per cluster size.
func benchAtSizes(b *testing.B, bench func(b *testing.B, n int)) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			bench(b, n)
		})
	}
}

// benchCanarySize is the canary of benchStrategy on n nodes: 10%.
func benchCanarySize(n int) int { return (n + 9) / 10 }

// benchStrategy is an auto canary on 10% of the nodes, spread over zones,
// with autoPause, autoFail and an analysis: every check a step makes is on.
func benchStrategy() *v1alpha1.CanaryStrategy {
	return &v1alpha1.CanaryStrategy{
		Replicas:             ptr.To(intstr.FromString("10%")),
		Duration:             dur(10 * time.Minute),
		NoRestartsDuration:   dur(5 * time.Minute),
		NodeAntiAffinityKeys: []string{"zone"},
		AutoPause:            &v1alpha1.CanaryAutoPause{MaxRestarts: ptr.To[int32](2), MaxSlowStartDuration: dur(5 * time.Minute)},
		AutoFail:             &v1alpha1.CanaryAutoFail{MaxRestarts: ptr.To[int32](5), CanaryTimeout: dur(time.Hour)},
		Analysis:             &v1alpha1.CanaryAnalysis{},
	}
}

// benchCandidates are n healthy nodes over benchZones. Restart counts
// differ, so the pick sorts on them rather than on names alone.
func benchCandidates(n int) []Candidate {
	candidates := zoned(n, benchZones...)
	for i := range candidates {
		candidates[i].Restarts = int32(i % 3)
	}
	return candidates
}

// checkSpread says how chosen fails to be the canary of benchStrategy over
// candidates: its size, and as many nodes in every zone.
func checkSpread(candidates []Candidate, chosen []string) error {
	want := benchCanarySize(len(candidates))
	if len(chosen) != want {
		return fmt.Errorf("%d canary nodes, want %d", len(chosen), want)
	}
	zoneOf := make(map[string]string, len(candidates))
	for _, c := range candidates {
		zoneOf[c.Name] = c.Labels["zone"]
	}
	perZone := map[string]int{}
	for _, name := range chosen {
		perZone[zoneOf[name]]++
	}
	for _, zone := range benchZones {
		if perZone[zone] != want/len(benchZones) {
			return fmt.Errorf("canary nodes per zone %v, want %d each", perZone, want/len(benchZones))
		}
	}
	return nil
}

// benchStep times Step on the input made for each size, after checking
// once what it decides.
func benchStep(b *testing.B, build func(n int) Input, check func(in Input, res Result) error) {
	benchAtSizes(b, func(b *testing.B, n int) {
		in := build(n)
		res, err := Step(in)
		if err == nil {
			err = check(in, res)
		}
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := Step(in); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStepStart is the step that starts a canary: 10% of the nodes
// picked out of all of them.
func BenchmarkStepStart(b *testing.B) {
	benchStep(b,
		func(n int) Input {
			in := stepInput(0, benchStrategy())
			in.Status, in.Pods, in.Ready = nil, nil, false
			in.Candidates, in.Desired = benchCandidates(n), n
			return in
		},
		func(in Input, res Result) error {
			if res.Transition != Started {
				return fmt.Errorf("transition %q, want %q", res.Transition, Started)
			}
			return checkSpread(in.Candidates, res.Status.Nodes)
		})
}

// BenchmarkStepRunning is a canary halfway through its duration, all its
// pods available, restarted once, with every metric of its analysis
// measured as often as the status keeps: the step of every reconcile while
// a canary runs.
func BenchmarkStepRunning(b *testing.B) {
	benchStep(b, runningCanary,
		func(in Input, res Result) error {
			switch {
			case res.Transition != "" || res.Promote || res.Status.Paused || res.Status.Failed:
				return fmt.Errorf("the canary changed: %q, %+v", res.Transition, res.Status)
			case !slices.Equal(res.Status.Nodes, in.Status.Nodes):
				return fmt.Errorf("the canary moved from %d nodes to %d", len(in.Status.Nodes), len(res.Status.Nodes))
			case res.RequeueAfter != 5*time.Minute:
				return fmt.Errorf("requeue after %s, want the 5m left of its duration", res.RequeueAfter)
			case len(res.Status.Analysis.Metrics) != len(in.Analysis.Metrics):
				return fmt.Errorf("%d metrics recorded, want %d", len(res.Status.Analysis.Metrics), len(in.Analysis.Metrics))
			}
			return nil
		})
}

// runningCanary is a canary of benchStrategy on n nodes, started 5 minutes
// ago, with a pod on each canary node and a running analysis.
func runningCanary(n int) Input {
	in := stepInput(5*time.Minute, benchStrategy())
	in.Candidates, in.Desired = benchCandidates(n), n
	in.Status.Nodes = SelectNodes(in.Candidates, benchCanarySize(n), in.Strategy.NodeAntiAffinityKeys, nil)
	in.Status.ReadyAt = &metav1.Time{Time: start.Add(time.Minute)}
	in.Pods = make([]*corev1.Pod, len(in.Status.Nodes))
	for i, node := range in.Status.Nodes {
		in.Pods[i] = canaryPod("rs-2-"+node, restarts(1, "", "Error"))
	}
	in.Analysis = measuredAnalysis(3, 10)
	return in
}

// measuredAnalysis is a running analysis of metrics metrics, each with
// measurements successful measurements recorded.
func measuredAnalysis(metrics, measurements int) *v1alpha1.AnalysisStatus {
	a := &v1alpha1.AnalysisStatus{Phase: v1alpha1.AnalysisRunning, Message: "measuring"}
	for m := range metrics {
		r := v1alpha1.MetricResult{Name: fmt.Sprintf("metric-%d", m), Phase: v1alpha1.AnalysisRunning,
			Count: int32(measurements), Successful: int32(measurements)}
		for i := range measurements {
			r.Measurements = append(r.Measurements, v1alpha1.Measurement{
				Phase: v1alpha1.AnalysisSuccessful, Value: "0.002",
				Query: `sum(rate(http_requests_total{code=~"5..",pod=~"rs-2-.*"}[5m])) / sum(rate(http_requests_total{pod=~"rs-2-.*"}[5m]))`,
				Time:  metav1.NewTime(start.Add(time.Duration(i+1) * 30 * time.Second)),
			})
		}
		a.Metrics = append(a.Metrics, r)
	}
	return a
}

// BenchmarkSelectNodes times the pick alone: a new canary's 10% out of
// every node, and a running canary keeping the nodes it has.
func BenchmarkSelectNodes(b *testing.B) {
	keys := []string{"zone"}
	for _, bc := range []struct {
		name     string
		previous func(candidates []Candidate) []string
	}{
		{"new", func([]Candidate) []string { return nil }},
		{"kept", func(candidates []Candidate) []string {
			return SelectNodes(candidates, benchCanarySize(len(candidates)), keys, nil)
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			benchAtSizes(b, func(b *testing.B, n int) {
				candidates := benchCandidates(n)
				previous := bc.previous(candidates)
				if err := checkSpread(candidates, SelectNodes(candidates, benchCanarySize(n), keys, previous)); err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					SelectNodes(candidates, benchCanarySize(n), keys, previous)
				}
			})
		})
	}
}

// BenchmarkNewCandidate times making every node a candidate, as the
// reconciler does before each step; one node in ten is cordoned.
func BenchmarkNewCandidate(b *testing.B) {
	benchAtSizes(b, func(b *testing.B, n int) {
		nodes := make([]*corev1.Node, n)
		for i := range nodes {
			nodes[i] = readyNode(fmt.Sprintf("node-%05d", i))
			nodes[i].Spec.Unschedulable = i%10 == 0
		}
		candidates := make([]Candidate, n)
		build := func() {
			for i, node := range nodes {
				candidates[i] = NewCandidate(node, 0)
			}
		}
		build()
		healthy := 0
		for _, c := range candidates {
			if c.Unhealthy == "" {
				healthy++
			}
		}
		if healthy != n-n/10 {
			b.Fatalf("%d healthy candidates, want %d", healthy, n-n/10)
		}
		for b.Loop() {
			build()
		}
	})
}
