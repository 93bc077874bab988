package e2e

import (
	"github.com/onsi/gomega"

	"github.com/extendeddaemonset/extendeddaemonset/test/invariants"
)

// watchInvariants runs the invariant monitor on the scenario's namespace
// for the whole test: the first broken promise fails the test as it
// happens, and the monitor's timeline is logged at the end. It stops
// before the workloads are deleted, which takes every pod down at once.
func (s *scenario) watchInvariants() {
	m, err := invariants.Start(s.ctx, env.Cluster.Config(), s.ns, invariants.Options{
		OnViolation: func(v invariants.Violation) {
			if !s.breakingOnPurpose.Load() {
				s.t.Errorf("rollout invariant broken: %s", v)
			}
		},
	})
	s.g.Expect(err).NotTo(gomega.HaveOccurred(), "starting the invariant monitor")
	s.monitor = m
	s.t.Cleanup(func() {
		if report := m.Stop(); len(report.Violations) > 0 && !s.breakingOnPurpose.Load() {
			s.t.Logf("invariant monitor:\n%s", report)
		}
	})
}
