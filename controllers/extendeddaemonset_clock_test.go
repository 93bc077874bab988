package controllers

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/store"
)

// countingClock is a fixed clock that counts how often it is read.
type countingClock struct {
	*clocktesting.FakePassiveClock
	reads int
}

func (c *countingClock) Now() time.Time {
	c.reads++
	return c.FakePassiveClock.Now()
}

// TestOneNowPerExtendedDaemonSetPass: a pass reads the clock once, at its
// start, and every decision of the pass (the canary's start, its
// schedule, the status) is taken at that instant, however long the
// observations between take.
func TestOneNowPerExtendedDaemonSetPass(t *testing.T) {
	g := gomega.NewWithT(t)
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	builder := fake.NewClientBuilder().WithScheme(scheme).
		WithStatusSubresource(&v1alpha1.ExtendedDaemonSet{}, &v1alpha1.ExtendedDaemonSetReplicaSet{})
	for _, ix := range store.FieldIndexes() {
		builder = builder.WithIndex(ix.Object, ix.Field, ix.Extract)
	}
	c := builder.Build()
	ctx := t.Context()
	for _, name := range []string{"node-a", "node-b"} {
		g.Expect(c.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		}})).To(gomega.Succeed())
	}
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns"}}
	eds.Spec.Template = corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "agent:v2"}}},
	}
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{Duration: &metav1.Duration{Duration: 10 * time.Minute}}
	g.Expect(c.Create(ctx, eds)).To(gomega.Succeed())
	active := &v1alpha1.ExtendedDaemonSetReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "agent-old", Namespace: "ns",
		Labels: map[string]string{v1alpha1.ExtendedDaemonSetNameLabel: "agent"}}}
	g.Expect(ctrl.SetControllerReference(eds, active, scheme)).To(gomega.Succeed())
	g.Expect(c.Create(ctx, active)).To(gomega.Succeed())
	eds.Status.ActiveReplicaSet = active.Name
	g.Expect(c.Status().Update(ctx, eds)).To(gomega.Succeed())

	clock := &countingClock{FakePassiveClock: clocktesting.NewFakePassiveClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))}
	r := &ExtendedDaemonSetReconciler{Client: c, APIReader: c, Recorder: events.NewFakeRecorder(100), Clock: clock, store: store.Listing(c)}
	_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(eds)})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(eds), eds)).To(gomega.Succeed())
	g.Expect(eds.Status.Canary).NotTo(gomega.BeNil(), "the new template starts a canary")
	g.Expect(eds.Status.Canary.StartedAt.Time.Equal(clock.FakePassiveClock.Now())).To(gomega.BeTrue(),
		"the canary starts at the pass's now, not %v", eds.Status.Canary.StartedAt)
	g.Expect(clock.reads).To(gomega.Equal(1), "the pass reads the clock once")
}
