package controllers

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A canary is ready only when each of its nodes runs an available canary
// pod: no counter stands in for a pod.
func TestCanaryReadyMeansAnAvailablePodOnEveryCanaryNode(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := func(node string, readyAgo time.Duration, mutate ...func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "canary-" + node}, Spec: corev1.PodSpec{NodeName: node}}
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-readyAgo))}}
		for _, m := range mutate {
			m(p)
		}
		return p
	}
	notReady := func(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse }
	terminating := func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: now} }
	for _, tc := range []struct {
		name  string
		nodes []string
		pods  []*corev1.Pod
		want  bool
	}{
		{"an available pod on every node", []string{"a", "b"}, []*corev1.Pod{pod("a", time.Minute), pod("b", time.Minute)}, true},
		{"a node without a pod", []string{"a", "b"}, []*corev1.Pod{pod("a", time.Minute)}, false},
		{"a pod not ready", []string{"a"}, []*corev1.Pod{pod("a", time.Minute, notReady)}, false},
		{"a pod terminating", []string{"a"}, []*corev1.Pod{pod("a", time.Minute, terminating)}, false},
		{"a pod ready for less than minReadySeconds", []string{"a"}, []*corev1.Pod{pod("a", 5*time.Second)}, false},
		{"a pod on another node", []string{"a"}, []*corev1.Pod{pod("b", time.Minute)}, false},
		{"no canary node", nil, []*corev1.Pod{pod("a", time.Minute)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gomega.NewWithT(t).Expect(availableOnEvery(tc.nodes, tc.pods, 10*time.Second, now)).To(gomega.Equal(tc.want))
		})
	}
}
