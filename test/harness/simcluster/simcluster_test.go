package simcluster

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/proc"
)

// The cluster schedules a pod with the real scheduler onto the fake node its
// affinity names, kwok runs it, and Stop leaves no process or file behind.
func TestClusterRunsPodAndStopsClean(t *testing.T) {
	testenv.RequireAssets(t)
	g := gomega.NewWithT(t)
	assets, err := testenv.AssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	marker := proc.Mark()

	c, err := Start(t.Context(), Options{Nodes: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	defer func() {
		if t.Failed() {
			var logs strings.Builder
			c.DumpLogs(&logs, 40)
			t.Log(logs.String())
		}
	}()

	client := kubernetes.NewForConfigOrDie(c.Config())
	nodes, err := client.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(nodes.Items).To(gomega.HaveLen(3))
	for i := range nodes.Items {
		g.Expect(isReady(&nodes.Items[i])).To(gomega.BeTrue(), nodes.Items[i].Name)
	}

	pods := client.CoreV1().Pods(metav1.NamespaceDefault)
	_, err = pods.Create(t.Context(), podOn("node-1"), metav1.CreateOptions{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Eventually(func(g gomega.Gomega) {
		pod, err := pods.Get(t.Context(), "pause", metav1.GetOptions{})
		g.Expect(err).NotTo(gomega.HaveOccurred())
		g.Expect(pod.Spec.NodeName).To(gomega.Equal("node-1"))
		g.Expect(pod.Status.Phase).To(gomega.Equal(corev1.PodRunning))
		g.Expect(pod.Status.Conditions).To(gomega.ContainElement(gomega.And(
			gomega.HaveField("Type", corev1.PodReady), gomega.HaveField("Status", corev1.ConditionTrue))))
	}).WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(gomega.Succeed())

	comps := c.components()
	g.Expect(comps).To(gomega.HaveLen(len(componentNames)))
	g.Expect(c.Stop()).To(gomega.Succeed())
	for _, comp := range comps {
		pid := comp.PID()
		g.Expect(errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)).To(gomega.BeTrue(), "%s (pid %d) is alive", comp.Name(), pid)
		g.Expect(errors.Is(syscall.Kill(-pid, 0), syscall.ESRCH)).To(gomega.BeTrue(), "process group of %s is alive", comp.Name())
	}
	left, err := proc.Leftovers(marker, assets)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	if len(left) > 0 {
		proc.Kill(left)
		t.Fatalf("processes left behind: %v", left)
	}
	_, err = os.Stat(c.dir)
	g.Expect(os.IsNotExist(err)).To(gomega.BeTrue(), "cluster directory %s still exists", c.dir)
	g.Expect(c.Stop()).To(gomega.Succeed(), "a second Stop")
}

// podOn pins a pod to a node the way the DaemonSet controller does: with a
// required node affinity on the node's name, leaving the binding to the
// scheduler.
func podOn(node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pause"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
						Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node},
					}}}},
				},
			}},
		},
	}
}

func TestStartRejectsNodeLifecycleController(t *testing.T) {
	for _, name := range forbiddenControllers {
		_, err := Start(t.Context(), Options{ExtraControllers: []string{"daemonset", name}})
		if err == nil || !strings.Contains(err.Error(), "node lifecycle") {
			t.Errorf("Start with controller %q: got error %v", name, err)
		}
	}
}
