package inspect

import (
	"bytes"
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// A zone-by-zone rollout shows its domains in the order they are updated,
// with where each stands; without a topology there is no such section.
func TestReportShowsTheDomains(t *testing.T) {
	g := gomega.NewWithT(t)
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns"}}
	eds.Status.ActiveReplicaSet = "agent-b"
	active := v1alpha1.ExtendedDaemonSetReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "agent-b", Namespace: "ns"}}
	active.Status.Domains = []v1alpha1.DomainStatus{
		{Name: "zone-a", State: v1alpha1.DomainDone, Desired: 3, UpToDate: 3},
		{Name: "zone-b", State: v1alpha1.DomainUpdating, Desired: 3, UpToDate: 1, Unavailable: 1},
		{Name: "(none)", State: v1alpha1.DomainPending, Desired: 1},
	}
	s := &snapshot{eds: eds, replicaSets: []v1alpha1.ExtendedDaemonSetReplicaSet{active}, now: time.Now()}

	var out bytes.Buffer
	g.Expect(writeReport(&out, s, false)).To(gomega.Succeed())
	g.Expect(out.String()).NotTo(gomega.ContainSubstring("Domains:"), "no topology")

	eds.Spec.Strategy.RollingUpdate.Topology = &v1alpha1.RollingUpdateTopology{Key: "topology.kubernetes.io/zone", Order: v1alpha1.TopologySequential}
	out.Reset()
	g.Expect(writeReport(&out, s, false)).To(gomega.Succeed())
	g.Expect(out.String()).To(gomega.ContainSubstring("Domains: by topology.kubernetes.io/zone, Sequential"))
	g.Expect(out.String()).To(gomega.MatchRegexp(`zone-a\s+Done\s+3/3\s+0\s+-\n`))
	g.Expect(out.String()).To(gomega.MatchRegexp(`zone-b\s+Updating\s+1/3\s+1\s+-\n`))
	g.Expect(out.String()).To(gomega.MatchRegexp(`\(none\)\s+Pending\s+0/1\s+0\s+-\n`))
}

// With judged bakes, the domains come from the ExtendedDaemonSet's status
// with each one's verdict, and a bake that halted the rollout shows its
// analysis metric by metric.
func TestReportShowsTheBakeVerdicts(t *testing.T) {
	g := gomega.NewWithT(t)
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns"}}
	eds.Spec.Strategy.RollingUpdate.Topology = &v1alpha1.RollingUpdateTopology{Key: "topology.kubernetes.io/zone", Order: v1alpha1.TopologySequential}
	eds.Status.ActiveReplicaSet = "agent-b"
	eds.Status.Domains = []v1alpha1.DomainStatus{
		{Name: "zone-a", State: v1alpha1.DomainDone, Desired: 3, UpToDate: 3, Analysis: v1alpha1.AnalysisSuccessful},
		{Name: "zone-b", State: v1alpha1.DomainBaking, Desired: 3, UpToDate: 3, Analysis: v1alpha1.AnalysisFailed},
		{Name: "zone-c", State: v1alpha1.DomainPending, Desired: 3},
	}
	eds.Status.Bake = &v1alpha1.DomainBakeStatus{ReplicaSet: "agent-b", Domain: "zone-b", PassedThrough: "zone-a",
		Analysis: &v1alpha1.AnalysisStatus{Phase: v1alpha1.AnalysisFailed, Message: "error-rate: 0.24 > max 0.05",
			Metrics: []v1alpha1.MetricResult{{Name: "error-rate", Phase: v1alpha1.AnalysisFailed, Count: 1, Failed: 1, Message: "0.24 > max 0.05"}}}}
	s := &snapshot{eds: eds, now: time.Now()}

	var out bytes.Buffer
	g.Expect(writeReport(&out, s, false)).To(gomega.Succeed())
	g.Expect(out.String()).To(gomega.MatchRegexp(`DOMAIN\s+STATE\s+UP-TO-DATE\s+UNAVAILABLE\s+BAKE ANALYSIS\n`))
	g.Expect(out.String()).To(gomega.MatchRegexp(`zone-a\s+Done\s+3/3\s+0\s+Successful\n`))
	g.Expect(out.String()).To(gomega.MatchRegexp(`zone-b\s+Baking\s+3/3\s+0\s+Failed\n`))
	g.Expect(out.String()).To(gomega.MatchRegexp(`zone-c\s+Pending\s+0/3\s+0\s+-\n`))
	g.Expect(out.String()).To(gomega.ContainSubstring("Bake analysis of zone-b: Failed: error-rate: 0.24 > max 0.05"))
	g.Expect(out.String()).To(gomega.MatchRegexp(`error-rate\s+Failed\s+`))

	eds.Status.Bake.PassedThrough = "zone-b"
	out.Reset()
	g.Expect(writeReport(&out, s, false)).To(gomega.Succeed())
	g.Expect(out.String()).NotTo(gomega.ContainSubstring("Bake analysis"), "a bake that passed is history")
}
