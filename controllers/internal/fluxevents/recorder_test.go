package fluxevents

import (
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
)

const group = "extendeddaemonset.io"

func newTestRecorder(kube events.EventRecorder, q *Queue) *Recorder {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	metadata := func(_, _ runtime.Object, reason string) map[string]string {
		return map[string]string{group + "/token": reason}
	}
	return NewRecorder(kube, q, scheme, group, metadata, logr.Discard())
}

func regarding() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "agent", UID: "uid-1", Annotations: map[string]string{
		"event.toolkit.fluxcd.io/team": "nodes", "other.io/ignored": "x",
	}}}
}

// The Kubernetes event shows the whole note; the Flux event carries the
// note without its Details, which go to metadata, with the metadata of
// the MetadataFunc and the regarding object's Flux event annotations.
func TestDetailsLeaveTheFluxMessage(t *testing.T) {
	g := gomega.NewWithT(t)
	kube := events.NewFakeRecorder(10)
	sender := newRecordingSender()
	q := NewQueue(sender, 10, time.Second, logr.Discard())
	r := newTestRecorder(kube, q)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}

	r.Eventf(regarding(), node, corev1.EventTypeWarning, "CanaryFailed", "Canary", "canary %s failed: %s%v; its nodes go back to %s",
		"agent-2", "CrashLoopBackOff", Detail("restarted 3 times"), "agent-1")
	g.Expect(kube.Events).To(gomega.Receive(gomega.Equal(
		"Warning CanaryFailed canary agent-2 failed: CrashLoopBackOff: restarted 3 times; its nodes go back to agent-1")))

	stop := runQueue(t, q)
	defer stop()
	var sent Event
	g.Eventually(sender.sent).Should(gomega.Receive(&sent))
	g.Expect(sent.Message).To(gomega.Equal("canary agent-2 failed: CrashLoopBackOff; its nodes go back to agent-1"))
	g.Expect(sent.Metadata).To(gomega.Equal(map[string]string{
		group + "/token":               "CanaryFailed",
		group + "/detail":              "restarted 3 times",
		"event.toolkit.fluxcd.io/team": "nodes",
	}))
	g.Expect(sent.Regarding).To(gomega.And(gomega.HaveField("Kind", "ConfigMap"), gomega.HaveField("Name", "agent"),
		gomega.HaveField("UID", gomega.BeEquivalentTo("uid-1"))))
	g.Expect(sent.Related).To(gomega.HaveField("Name", "node-1"))
	g.Expect(sent.Type).To(gomega.Equal(corev1.EventTypeWarning))
}

// An empty Detail leaves no trace in either event.
func TestEmptyDetail(t *testing.T) {
	g := gomega.NewWithT(t)
	message, details := splitDetails("canary %s paused: %s%v", []any{"agent-2", "Manual", Detail("")})
	g.Expect(message).To(gomega.Equal("canary agent-2 paused: Manual"))
	g.Expect(details).To(gomega.BeEmpty())
}

// However slow the notification-controller, Eventf returns at once: the
// Kubernetes event is recorded, and what the queue cannot hold is dropped
// and counted.
func TestSlowSenderNeverBlocksEventf(t *testing.T) {
	g := gomega.NewWithT(t)
	kube := events.NewFakeRecorder(200)
	sender := newRecordingSender()
	sender.block = make(chan struct{})
	defer close(sender.block)
	const size = 4
	q := NewQueue(sender, size, time.Second, logr.Discard())
	r := newTestRecorder(kube, q)
	stop := runQueue(t, q)
	defer stop()
	r.Eventf(regarding(), nil, corev1.EventTypeNormal, "Hangs", "Test", "the send of this one hangs")
	g.Eventually(sender.started).Should(gomega.Receive())

	droppedBefore := dropped()
	const burst = 100
	told := make(chan struct{})
	go func() {
		defer close(told)
		for range burst {
			r.Eventf(regarding(), nil, corev1.EventTypeNormal, "Burst", "Test", "one of many")
		}
	}()
	g.Eventually(told, 500*time.Millisecond).Should(gomega.BeClosed(), "Eventf waited for the sender")
	g.Expect(kube.Events).To(gomega.HaveLen(1 + burst))
	g.Expect(dropped() - droppedBefore).To(gomega.Equal(float64(burst - size)))
}
