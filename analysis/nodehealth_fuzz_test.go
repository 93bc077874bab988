package analysis

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// fuzzNodes reads nodes from data, a few bytes each: whether the node and
// its change time are known, one condition (type, status, when), and its
// pods (created when, ready or not since when, restarted when, phase). A
// time byte is minutes around the change, or unknown.
type fuzzNodes struct {
	data []byte
	at   int
}

func (f *fuzzNodes) next() byte {
	if f.at >= len(f.data) {
		return 0
	}
	f.at++
	return f.data[f.at-1]
}

func (f *fuzzNodes) when() time.Time {
	b := f.next()
	if b == 0xff {
		return time.Time{}
	}
	return change.Add(time.Duration(int(b%32)-16) * time.Minute)
}

func (f *fuzzNodes) observations(prefix string, n int) []NodeObservation {
	types := []corev1.NodeConditionType{corev1.NodeReady, corev1.NodeNetworkUnavailable, corev1.NodeDiskPressure, "KernelDeadlock", "Other"}
	statuses := []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown}
	var out []NodeObservation
	for i := range n {
		flags := f.next()
		o := NodeObservation{Since: change}
		if flags&1 != 0 {
			o.Since = time.Time{}
		}
		if flags&2 == 0 {
			c := f.next()
			o.Node = healthyNode(fmt.Sprintf("%s-%d", prefix, i),
				nodeCond(types[int(c)%len(types)], statuses[int(c/8)%len(statuses)], f.when()))
		}
		for j := range int(f.next() % 8) {
			state := f.next()
			p := otherPod(fmt.Sprintf("%s-%d-%d", prefix, i, j), createdAt(f.when()))
			if state&1 != 0 {
				notReadyAt(f.when())(p)
			}
			if state&2 != 0 {
				restartedAt(f.when())(p)
			}
			switch state / 4 % 4 {
			case 1:
				failedAtTime(f.when())(p)
			case 2:
				succeeded(p)
			case 3:
				terminating(p)
			}
			o.Pods = append(o.Pods, p)
		}
		out = append(out, o)
	}
	return out
}

// Whatever the nodes and pods observed, a nodeHealth measurement does not
// panic, stays within what the status keeps, says why, and does not
// depend on the order the nodes were observed in.
func FuzzMeasureNodeHealth(f *testing.F) {
	f.Add([]byte{}, uint8(0), uint8(0), uint8(10))
	f.Add([]byte{0, 0x00, 0x20, 3, 0, 0x20, 1, 0x22, 0, 0x30}, uint8(1), uint8(0), uint8(10))
	f.Add([]byte{0, 0x08, 0x11, 2, 3, 0x10, 0x12, 0x14, 4, 0xff, 0x11, 0x18, 2, 0x00, 0x30, 1, 0, 0x10}, uint8(2), uint8(1), uint8(0))
	f.Add([]byte{1, 0x00, 0x20, 0, 2, 7, 0xff, 0xff, 0xff, 0xff}, uint8(3), uint8(2), uint8(100))
	f.Fuzz(func(t *testing.T, data []byte, judged, baseline, drop uint8) {
		fn := &fuzzNodes{data: data}
		in := NodeHealthInput{Judged: fn.observations("canary", int(judged%12)), Baseline: fn.observations("stable", int(baseline%12))}
		m := nodeHealthMetric(v1alpha1.NodeHealthMetric{
			Conditions:          []string{"KernelDeadlock"},
			MaxUnhealthyNodes:   ptr(int32(drop % 3)),
			MaxPodReadinessDrop: ptr(int32(drop % 101)),
		})
		got := MeasureNodeHealth(m, in, nhNow)
		switch {
		case got.Phase != v1alpha1.AnalysisSuccessful && got.Phase != v1alpha1.AnalysisFailed && got.Phase != v1alpha1.AnalysisInconclusive:
			t.Fatalf("phase %s: %s", got.Phase, got.Message)
		case got.Message == "" || len(got.Message) > maxMessageLength:
			t.Fatalf("message of %d bytes: %q", len(got.Message), got.Message)
		case len(got.Nodes) > maxNodesNamed:
			t.Fatalf("%d nodes of evidence", len(got.Nodes))
		case (got.Phase == v1alpha1.AnalysisFailed) != (len(got.Nodes) > 0):
			t.Fatalf("%s with %d nodes of evidence: %s", got.Phase, len(got.Nodes), got.Message)
		}
		for _, e := range got.Nodes {
			if e.Message == "" || len(e.Message) > maxEvidenceMessage || !strings.HasPrefix(e.Node, "canary-") {
				t.Fatalf("evidence %+v", e)
			}
		}
		judgeable := slices.ContainsFunc(in.Judged, func(o NodeObservation) bool { return o.Node != nil && !o.Since.IsZero() })
		if judgeable == (got.Phase == v1alpha1.AnalysisInconclusive) {
			t.Fatalf("%s with judgeable nodes %v: %s", got.Phase, judgeable, got.Message)
		}

		slices.Reverse(in.Judged)
		slices.Reverse(in.Baseline)
		again := MeasureNodeHealth(m, in, nhNow)
		if again.Phase != got.Phase || again.Value != got.Value || again.BaselineValue != got.BaselineValue ||
			fmt.Sprint(again.Nodes) != fmt.Sprint(got.Nodes) {
			t.Fatalf("the order of the nodes changed the measurement:\n%+v\n%+v", got, again)
		}
	})
}
