package manifests

import (
	"context"
	"testing"

	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

const minimalCanaryEDS = `
apiVersion: extendeddaemonset.io/v1alpha1
kind: ExtendedDaemonSet
metadata:
  name: defaults
spec:
  template:
    spec:
      containers:
      - {name: agent, image: registry.k8s.io/pause:3.10}
  strategy:
    canary:
      analysis:
        provider:
          prometheus: {address: "https://prometheus:9090"}
        metrics:
        - name: errors
          preset: errorRate
          errorRate: {requestMetric: http_requests_total, errorSelector: 'code="500"'}
          baseline: {mannWhitney: {}}
        - name: synthetic
          web: {url: "http://checks.example/agent", jsonPath: "{.value}"}
          thresholdRange: {max: 1}
`

func TestDefaultsAreStoredOnTheObject(t *testing.T) {
	testenv.RequireAssets(t)
	g := gomega.NewWithT(t)
	ctx := context.Background()
	if err := create(ctx, t, fromYAML(t, minimalCanaryEDS)); err != nil {
		t.Fatal(err)
	}
	var eds v1alpha1.ExtendedDaemonSet
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "default", Name: "defaults"}, &eds)).To(gomega.Succeed())

	rolling := eds.Spec.Strategy.RollingUpdate
	g.Expect(rolling.Type).To(gomega.Equal(v1alpha1.RollingUpdateStandard))
	g.Expect(rolling.MaxUnavailable).To(gomega.HaveValue(gomega.Equal(intstr.FromInt32(1))))
	g.Expect(rolling.MaxSurge).To(gomega.HaveValue(gomega.Equal(intstr.FromInt32(0))))
	g.Expect(rolling.MaxParallelPodCreation).To(gomega.HaveValue(gomega.BeEquivalentTo(250)))
	g.Expect(rolling.SlowStartIntervalDuration).To(gomega.BeNil(), "doubling slow start is the default")
	g.Expect(eds.Spec.RevisionHistoryLimit).To(gomega.HaveValue(gomega.BeEquivalentTo(10)))

	c := eds.Spec.Strategy.Canary
	g.Expect(c.Replicas).To(gomega.BeNil(), "the canary replicas default (1) lives in code, so steps can be set without them")
	g.Expect(c.ValidationMode).To(gomega.Equal(v1alpha1.CanaryValidationAuto))
	g.Expect(c.Duration).To(gomega.BeNil(), "the canary duration default lives in code, so manual canaries stay valid")
	// Left out, the restart checks are on with the original project's
	// limits, the ones the controller also gives an object stored without
	// them.
	g.Expect(c.AutoPause).NotTo(gomega.BeNil())
	g.Expect(c.AutoPause.Enabled).To(gomega.HaveValue(gomega.BeTrue()))
	g.Expect(c.AutoPause.MaxRestarts).To(gomega.HaveValue(gomega.Equal(v1alpha1.DefaultAutoPauseMaxRestarts)))
	g.Expect(c.AutoFail).NotTo(gomega.BeNil())
	g.Expect(c.AutoFail.Enabled).To(gomega.HaveValue(gomega.BeTrue()))
	g.Expect(c.AutoFail.MaxRestarts).To(gomega.HaveValue(gomega.Equal(v1alpha1.DefaultAutoFailMaxRestarts)))
	g.Expect(c.NoRestartsDuration).To(gomega.BeNil(), "its default (5m, at most the duration) lives in code: the schema refuses one longer than the duration")

	a := c.Analysis
	g.Expect(a.Interval.Duration.String()).To(gomega.Equal("1m0s"))
	g.Expect(a.Provider.Prometheus.Timeout.Duration.String()).To(gomega.Equal("10s"))
	g.Expect(a.FailureLimit).To(gomega.HaveValue(gomega.BeEquivalentTo(0)))
	g.Expect(a.InconclusiveLimit).To(gomega.HaveValue(gomega.BeEquivalentTo(0)))
	g.Expect(a.ConsecutiveErrorLimit).To(gomega.HaveValue(gomega.BeEquivalentTo(4)))
	m := a.Metrics[0]
	g.Expect(m.ErrorRate.PodLabel).To(gomega.Equal("pod"))
	g.Expect(m.Baseline.MannWhitney.Confidence).To(gomega.HaveValue(gomega.Equal(0.95)))
	g.Expect(m.Baseline.MannWhitney.Direction).To(gomega.Equal(v1alpha1.DirectionIncrease))
	w := a.Metrics[1].Web
	g.Expect(w.Method).To(gomega.Equal("GET"))
	g.Expect(w.RequestTimeout.Duration.String()).To(gomega.Equal("10s"))
	g.Expect(w.Retries).To(gomega.HaveValue(gomega.BeEquivalentTo(2)))
}
