package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness"
	"github.com/extendeddaemonset/extendeddaemonset/test/invariants"
)

// nodeHealthNodes is the size of a node-health test's node group: one
// canary node against three baseline nodes.
const nodeHealthNodes = 4

// webApp labels the pods of the other workload the node-health tests run
// beside the agent.
const webApp = "web"

// startCNI adds a node group with a pod of another workload (a web
// server) on each node, Running and Ready, then rolls a CNI-like agent out
// there, v1, and changes it to version: its canary of one node is judged
// by node health with the defaults, every second. It returns the canary
// and the web pods by node.
func (s *scenario) startCNI(group, version string, duration time.Duration) (*analyzedCanary, map[string]string) {
	s.t.Helper()
	nodes := make([]string, nodeHealthNodes)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("%s-%d", group, i)
	}
	s.addNodeGroup(group, nodes...)
	web := s.runWebOn(nodes)

	eds := agentEDS(s.ns, "cni", "v1")
	eds.Spec.Template.Spec.NodeSelector = onGroup(group)
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(1)), Duration: &metav1.Duration{Duration: duration},
		Analysis: &v1alpha1.CanaryAnalysis{
			Interval: &metav1.Duration{Duration: time.Second},
			Metrics:  []v1alpha1.AnalysisMetric{{Name: "node-health", NodeHealth: &v1alpha1.NodeHealthMetric{}}},
		},
	}
	s.create(eds)
	s.expectRolledOut(eds, "v1", nodes)
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, version) })
	c := &analyzedCanary{eds: eds, stable: map[types.UID]string{}}
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		g.Expect(latest.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(latest.Status.Canary.Nodes).To(gomega.HaveLen(1))
		c.replicaSet, c.nodes = latest.Status.Canary.ReplicaSet, latest.Status.Canary.Nodes
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	for _, pod := range s.pods(s.g, eds) {
		if pod.Spec.NodeName != c.nodes[0] && pod.DeletionTimestamp == nil {
			c.stable[pod.UID] = pod.Spec.NodeName
		}
	}
	return c, web
}

// runWebOn runs a pod of the web workload on each of nodes, bound there
// as the scheduler would, and waits until the simulated kubelets report
// them Running and Ready. They are deleted at the end of the test, before
// the scenario waits for its namespace to empty.
func (s *scenario) runWebOn(nodes []string) map[string]string {
	s.t.Helper()
	web := map[string]string{}
	for _, node := range nodes {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "web-" + node, Labels: map[string]string{"app": webApp}},
			Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "web", Image: "registry.example/web:1"}}},
		}
		s.g.Expect(env.Client.Create(s.ctx, pod)).To(gomega.Succeed())
		web[node] = pod.Name
	}
	s.t.Cleanup(func() {
		// t.Context is done once cleanup runs.
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		err := env.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(s.ns), client.MatchingLabels{"app": webApp},
			client.GracePeriodSeconds(0))
		if err != nil {
			s.t.Errorf("deleting the web pods: %v", err)
		}
	})
	s.g.Eventually(func(g gomega.Gomega) {
		var list corev1.PodList
		g.Expect(env.Client.List(s.ctx, &list, client.InNamespace(s.ns), client.MatchingLabels{"app": webApp})).To(gomega.Succeed())
		g.Expect(list.Items).To(gomega.HaveLen(len(nodes)))
		for i := range list.Items {
			g.Expect(invariants.RunningAndReady(&list.Items[i])).To(gomega.BeTrue(), "web pod %s", list.Items[i].Name)
		}
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	return web
}

// loseNetwork plays the kubelet of a node whose pods lost their network:
// the pod's containers and the pod turn not ready. The simulated kubelets
// leave a pod made unready this way as it is.
func (s *scenario) loseNetwork(pod string) {
	s.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live := &corev1.Pod{}
		if err := env.Client.Get(s.ctx, client.ObjectKey{Namespace: s.ns, Name: pod}, live); err != nil {
			return err
		}
		now := metav1.Now()
		for i := range live.Status.Conditions {
			if t := live.Status.Conditions[i].Type; t == corev1.PodReady || t == corev1.ContainersReady {
				live.Status.Conditions[i].Status, live.Status.Conditions[i].LastTransitionTime = corev1.ConditionFalse, now
				live.Status.Conditions[i].Reason = "ContainersNotReady"
			}
		}
		for i := range live.Status.ContainerStatuses {
			live.Status.ContainerStatuses[i].Ready = false
		}
		return env.Client.Status().Update(s.ctx, live)
	})
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
}

// A "bad CNI": under its new version, the other pods of the nodes it runs
// on lose their network while its own pod stays Ready. The canary fails on
// node health: its analysis, the Stalled condition, the Warning event and
// kubectl eds status name the node and the pod; the canary node goes back
// to the stable version, and no stable pod is touched.
func TestNodeHealthFailsABadCNICanary(t *testing.T) {
	s := newScenario(t)
	c, web := s.startCNI("nh-bad", "v2-bad", 5*time.Minute)
	written := s.get(c.eds)
	node := c.nodes[0]

	// Once the bad version's pod runs on the canary node, the web pod
	// there loses its network.
	s.g.Eventually(func(g gomega.Gomega) {
		pod := s.livePodOn(g, c.eds, node)
		g.Expect(pod.Spec.Containers[0].Image).To(gomega.Equal(agentImage("v2-bad")))
		g.Expect(invariants.RunningAndReady(&pod)).To(gomega.BeTrue())
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	s.loseNetwork(web[node])

	blamed := s.ns + "/" + web[node]
	s.expectFailedByAnalysis(c, written, "node-health", node, blamed)
	s.expectWarning(c.eds, v1alpha1.ReasonAnalysisFailed, c.replicaSet, node, blamed)
	latest := s.get(c.eds)
	a := latest.Status.Canary.Analysis
	s.g.Expect(a.Metrics).To(gomega.HaveLen(1))
	newest := a.Metrics[0].Measurements[len(a.Metrics[0].Measurements)-1]
	s.g.Expect(newest.Phase).To(gomega.Equal(v1alpha1.AnalysisFailed))
	s.g.Expect(newest.Nodes).To(gomega.ConsistOf(gomega.And(
		gomega.HaveField("Node", node), gomega.HaveField("Message", gomega.ContainSubstring(blamed)))))

	// status exits 1 on a failed rollout.
	out, code := runPlugin(s, "status", c.eds.Name, "-n", s.ns)
	s.g.Expect(code).To(gomega.Equal(1))
	s.g.Expect(out).To(gomega.ContainSubstring("Nodes node-health blames:"))
	s.g.Expect(out).To(gomega.MatchRegexp(`(?m)^    ` + node + `: 1 of 1 other pods not ready since the change: ` + blamed))
}

// A good version leaves the other pods alone: it passes node health and is
// promoted, and the rolling update takes every node.
func TestNodeHealthPromotesAGoodCNI(t *testing.T) {
	s := newScenario(t)
	c, _ := s.startCNI("nh-good", "v2", 5*time.Second)
	latest := s.expectAnalysis(c, v1alpha1.AnalysisSuccessful, metav1.ConditionTrue)
	newest := latest.Status.Canary.Analysis.Metrics[0].Measurements
	s.g.Expect(newest[len(newest)-1].Message).To(gomega.ContainSubstring("against 100% on the baseline (3 of 3)"))
	var nodes []string
	for i := range nodeHealthNodes {
		nodes = append(nodes, fmt.Sprintf("nh-good-%d", i))
	}
	s.expectPromoted(c.eds, "v2", nodes, c.replicaSet)
}

// plugin builds kubectl-eds once for the package's tests.
var plugin = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "e2e-kubectl-eds-*")
	if err != nil {
		return "", fmt.Errorf("creating the plugin's directory: %w", err)
	}
	bin := filepath.Join(dir, "kubectl-eds")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/kubectl-eds")
	cmd.Dir = harness.RepoRoot()
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=auto")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/kubectl-eds: %w\n%s", err, out)
	}
	return bin, nil
})

// runPlugin runs kubectl eds with args against the cluster and returns
// what it printed and its exit code.
func runPlugin(s *scenario, args ...string) (string, int) {
	s.t.Helper()
	bin, err := plugin()
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(s.ctx, bin, append(args, "--kubeconfig", env.Cluster.KubeconfigPath())...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	s.t.Logf("kubectl eds %v:\n%s%s", args, stdout.String(), stderr.String())
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return stdout.String(), exit.ExitCode()
	}
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	return stdout.String(), 0
}
