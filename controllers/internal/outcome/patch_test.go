package outcome

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

// A status computed from a version the API server has since replaced is
// refused, so a reconcile that read a stale cache neither overwrites the
// newer status nor tells its transitions a second time.
func TestStatusPatchRefusesAStaleRead(t *testing.T) {
	testenv.RequireAssets(t)
	g := gomega.NewWithT(t)
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "status-patch-"}}
	g.Expect(k8s.Create(ctx, ns)).To(gomega.Succeed())
	eds := &v1alpha1.ExtendedDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: ns.Name},
		Spec: v1alpha1.ExtendedDaemonSetSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "agent:v1"}}},
		}},
	}
	g.Expect(k8s.Create(ctx, eds)).To(gomega.Succeed())
	withToken := func(read *v1alpha1.ExtendedDaemonSet, token string) *v1alpha1.ExtendedDaemonSet {
		after := read.DeepCopy()
		after.Status.LastHandledRetry = token
		return after
	}
	read := &v1alpha1.ExtendedDaemonSet{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(eds), read)).To(gomega.Succeed())
	g.Expect(PatchStatus(ctx, k8s, read.DeepCopy(), withToken(read, "first"))).To(gomega.Succeed())

	err := PatchStatus(ctx, k8s, read.DeepCopy(), withToken(read, "second"))
	g.Expect(apierrors.IsConflict(err)).To(gomega.BeTrue(), "a write from a stale read: %v", err)
	var writes StatusWrites
	_, wrote, err := writes.Patch(ctx, k8s, read.DeepCopy(), read.DeepCopy(), true, false, time.Now())
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(wrote).To(gomega.BeFalse(), "nothing changed: nothing is sent")
}
