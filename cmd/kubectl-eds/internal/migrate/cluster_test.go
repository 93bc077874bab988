package migrate

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/clitest"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// decodeManifest splits what migrate printed into its objects.
func decodeManifest(g *gomega.WithT, manifest string) []*unstructured.Unstructured {
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	var objects []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		err := dec.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return objects
		}
		g.Expect(err).NotTo(gomega.HaveOccurred())
		objects = append(objects, obj)
	}
}

// Every migrated manifest of testdata is created as is by the API server,
// its schema, CEL rules and strict field validation included: no field is
// unknown to it, none is refused.
func TestTheAPIServerAcceptsMigratedManifests(t *testing.T) {
	s := env.NewScenario(t)
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	s.G.Expect(err).NotTo(gomega.HaveOccurred())
	for _, input := range inputs {
		r := env.Run(t, []cli.Group{Commands}, "migrate", "-f", input)
		s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
		for _, obj := range decodeManifest(s.G, r.Out) {
			obj.SetNamespace(s.Namespace)
			s.G.Expect(s.Client.Create(s.Ctx, obj, client.FieldValidation(metav1.FieldValidationStrict))).To(gomega.Succeed(),
				"%s: %s %s", input, obj.GetKind(), obj.GetName())
			// The objects are of no use here once stored: the controller
			// would put their pods on the nodes of other tests.
			t.Cleanup(func() { _ = s.Client.Delete(s.Ctx, obj) })
		}
	}
}

// The steps migrate prints for an ExtendedDaemonSet of the original
// project hand its pods over node by node: once orphaned (its
// ExtendedDaemonSet and replica sets deleted with --cascade=orphan), the
// pods its selector matches are old pods, replaced within maxUnavailable,
// and no node gets a second pod beside them.
func TestHandsTheOriginalsOrphanedPodsOver(t *testing.T) {
	s := env.NewScenario(t)
	nodes := s.Nodes(3)
	original := fmt.Sprintf(`apiVersion: datadoghq.com/v1alpha1
kind: ExtendedDaemonSet
metadata: {name: agent, namespace: %s}
spec:
  strategy:
    canary: {replicas: 1, duration: 1m}
    reconcileFrequency: 10s
  template:
    metadata: {labels: {app: agent}}
    spec:
      nodeSelector: {%s: %s}
      containers: [{name: agent, image: "agent:v2"}]
`, s.Namespace, clitest.ScenarioLabel, s.Namespace)
	r := env.RunWithInput(t, []cli.Group{Commands}, strings.NewReader(original), "migrate", "-f", "-")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
	s.G.Expect(r.Err).To(gomega.ContainSubstring("--cascade=orphan"))

	// The original's pods after the orphaning steps: labelled as the
	// original labels them, running, and owned by no controller.
	for i, node := range nodes {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("agent-old-%d", i), Namespace: s.Namespace,
				Labels: map[string]string{"app": "agent", "extendeddaemonset.datadoghq.com/name": "agent"}},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "agent", Image: "agent:v1"}}},
		}
		s.Create(pod)
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()},
		}, ContainerStatuses: []corev1.ContainerStatus{{Name: "agent", Image: "agent:v1", Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}}
		s.G.Expect(s.Client.Status().Update(s.Ctx, pod)).To(gomega.Succeed())
	}
	go removeTerminatingPods(s)

	objects := decodeManifest(s.G, r.Out)
	s.G.Expect(objects).To(gomega.HaveLen(1))
	s.Create(objects[0])

	// Never two agents on a node, never more than maxUnavailable (1)
	// nodes without one, until every node runs the new pods.
	deadline := time.Now().Add(time.Minute)
	for {
		var pods corev1.PodList
		s.G.Expect(s.Client.List(s.Ctx, &pods, client.InNamespace(s.Namespace))).To(gomega.Succeed())
		perNode := map[string]int{}
		var old, current int
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil {
				continue
			}
			// A new pod is bound by the test's kubelet; until then its
			// node affinity names its node.
			node := p.Spec.NodeName
			if node == "" {
				node = placement.TargetNode(&p)
			}
			perNode[node]++
			if p.Labels[v1alpha1.ExtendedDaemonSetNameLabel] == "" {
				old++
			} else {
				current++
			}
		}
		for node, n := range perNode {
			s.G.Expect(n).To(gomega.BeNumerically("<=", 1), "pods on node %q", node)
		}
		s.G.Expect(len(nodes)-old-current).To(gomega.BeNumerically("<=", 1), "nodes without an agent")
		if old == 0 && current == len(nodes) {
			break
		}
		s.G.Expect(time.Now()).To(gomega.BeTemporally("<", deadline), "old pods %d, new pods %d", old, current)
		time.Sleep(20 * time.Millisecond)
	}
	s.WaitRolledOut("agent")
}

// removeTerminatingPods plays the kubelet for the pods of no
// ExtendedDaemonSet, which the test's kubelet leaves alone: once deleted,
// they go at once.
func removeTerminatingPods(s *clitest.Scenario) {
	for s.Ctx.Err() == nil {
		var pods corev1.PodList
		if err := s.Client.List(s.Ctx, &pods, client.InNamespace(s.Namespace)); err == nil {
			for i := range pods.Items {
				p := &pods.Items[i]
				if p.DeletionTimestamp != nil && p.Labels[v1alpha1.ExtendedDaemonSetNameLabel] == "" {
					_ = s.Client.Delete(s.Ctx, p, client.GracePeriodSeconds(0))
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}
