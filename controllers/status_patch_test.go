package controllers

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// A status computed from a version the API server has since replaced is
// refused, so a reconcile that read a stale cache neither overwrites the
// newer status nor tells its transitions a second time.
func TestStatusPatchRefusesAStaleRead(t *testing.T) {
	s := newScenario(t)
	eds := s.newEDS("agent", "agent:v1")
	s.create(eds)
	withToken := func(read *v1alpha1.ExtendedDaemonSet, token string) *v1alpha1.ExtendedDaemonSet {
		after := read.DeepCopy()
		after.Status.LastHandledRetry = token
		return after
	}
	var read *v1alpha1.ExtendedDaemonSet
	// The controller writes the status too: read and write until this
	// test's write lands on the version it read.
	s.g.Eventually(func() error {
		read = &v1alpha1.ExtendedDaemonSet{}
		if err := k8s.Get(s.ctx, client.ObjectKeyFromObject(eds), read); err != nil {
			return err
		}
		return patchStatus(s.ctx, k8s, read.DeepCopy(), withToken(read, "first"))
	}).Should(gomega.Succeed())

	err := patchStatus(s.ctx, k8s, read.DeepCopy(), withToken(read, "second"))
	s.g.Expect(apierrors.IsConflict(err)).To(gomega.BeTrue(), "a write from a stale read: %v", err)
	var writes statusWrites
	_, wrote, err := writes.patch(s.ctx, k8s, read.DeepCopy(), read.DeepCopy(), true, false, time.Now())
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	s.g.Expect(wrote).To(gomega.BeFalse(), "nothing changed: nothing is sent")
}
