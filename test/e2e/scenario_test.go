package e2e

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/invariants"
)

// Timeouts are generous: the machine may be small and busy. Nothing is
// asserted about speed.
const (
	rolloutTimeout = 4 * time.Minute
	cleanupTimeout = 2 * time.Minute
	pollInterval   = 250 * time.Millisecond
	// holdWindow is how long a state that must not change is watched.
	holdWindow = 5 * time.Second
	// canaryHeadStart is the duration of an auto canary whose pods a test
	// must report on (restarts, image pull errors) before it could be
	// promoted: room for a busy machine to start them and write their status.
	canaryHeadStart = 15 * time.Second
)

// scenario is one test on the shared cluster, in a namespace of its own.
type scenario struct {
	t   *testing.T
	g   *gomega.WithT
	ctx context.Context
	ns  string
	// nodes are the nodes the test added, deleted at its end.
	nodes []string
	// monitor checks the rollout invariants all along; a test that breaks
	// them on purpose sets breakingOnPurpose and reads its report.
	monitor           *invariants.Monitor
	breakingOnPurpose atomic.Bool
}

var unsafeNameChars = regexp.MustCompile(`[^a-z0-9-]+`)

// newScenario creates the test's namespace. At the end, the logs are
// dumped if the test failed, then its workloads (ExtendedDaemonSets,
// DaemonSets) and settings are deleted and their pods awaited, so the next
// test starts on empty nodes, and the nodes it added are deleted. The
// namespace itself stays: no namespace controller runs to finalize it.
// The invariant monitor watches the namespace meanwhile.
func newScenario(t *testing.T) *scenario {
	t.Helper()
	name := strings.Trim(unsafeNameChars.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	s := &scenario{t: t, g: gomega.NewWithT(t), ctx: t.Context(), ns: "e2e-" + name[:min(len(name), 50)]}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}}
	s.g.Expect(env.Client.Create(s.ctx, ns)).To(gomega.Succeed())
	t.Cleanup(s.deleteWorkloads)
	t.Cleanup(func() {
		if t.Failed() {
			var logs strings.Builder
			env.DumpLogs(&logs, 60)
			t.Log(logs.String())
		}
	})
	// Registered last, so it stops first.
	s.watchInvariants()
	return s
}

func (s *scenario) deleteWorkloads() {
	// t.Context is done once cleanup runs.
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	defer s.deleteNodes(ctx)
	// Settings go too: every node change makes the setting controller look
	// at the settings of every namespace.
	for _, kind := range []client.Object{&v1alpha1.ExtendedDaemonSet{}, &appsv1.DaemonSet{}, &v1alpha1.ExtendedDaemonsetSetting{}} {
		err := env.Client.DeleteAllOf(ctx, kind, client.InNamespace(s.ns),
			client.PropagationPolicy(metav1.DeletePropagationBackground))
		s.g.Expect(err).NotTo(gomega.HaveOccurred())
	}
	s.g.Eventually(func(g gomega.Gomega) {
		var pods corev1.PodList
		g.Expect(env.Client.List(ctx, &pods, client.InNamespace(s.ns))).To(gomega.Succeed())
		g.Expect(podNames(pods.Items)).To(gomega.BeEmpty(), "pods left in %s", s.ns)
	}).WithContext(ctx).WithPolling(pollInterval).Should(gomega.Succeed())
}

// agentEDS is a node agent with no canary; version changes its template.
func agentEDS(namespace, name, version string) *v1alpha1.ExtendedDaemonSet {
	labels := map[string]string{"app": name}
	return &v1alpha1.ExtendedDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: v1alpha1.ExtendedDaemonSetSpec{
			Selector: &v1alpha1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "agent", Image: agentImage(version),
				}}},
			},
		},
	}
}

func agentImage(version string) string { return "registry.example/agent:" + version }

// setVersion changes the agent's template to version.
func setVersion(eds *v1alpha1.ExtendedDaemonSet, version string) {
	eds.Spec.Template.Spec.Containers[0].Image = agentImage(version)
}

func (s *scenario) create(eds *v1alpha1.ExtendedDaemonSet) *v1alpha1.ExtendedDaemonSet {
	s.t.Helper()
	s.g.Expect(env.Client.Create(s.ctx, eds)).To(gomega.Succeed())
	return eds
}

// update applies mutate to the latest version of eds and writes it back,
// retrying on conflicts; eds is refreshed.
func (s *scenario) update(eds *v1alpha1.ExtendedDaemonSet, mutate func(*v1alpha1.ExtendedDaemonSet)) {
	s.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(s.ctx, client.ObjectKeyFromObject(eds), eds); err != nil {
			return err
		}
		mutate(eds)
		return env.Client.Update(s.ctx, eds)
	})
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
}

// specJSON is the spec of eds as the API server stores it, to compare.
func specJSON(g gomega.Gomega, eds *v1alpha1.ExtendedDaemonSet) string {
	data, err := json.Marshal(eds.Spec)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return string(data)
}

func (s *scenario) get(eds *v1alpha1.ExtendedDaemonSet) *v1alpha1.ExtendedDaemonSet {
	s.t.Helper()
	latest := &v1alpha1.ExtendedDaemonSet{}
	s.g.Expect(env.Client.Get(s.ctx, client.ObjectKeyFromObject(eds), latest)).To(gomega.Succeed())
	return latest
}

// replicaSets lists the replica sets labelled with eds's name.
func (s *scenario) replicaSets(g gomega.Gomega, eds *v1alpha1.ExtendedDaemonSet) []v1alpha1.ExtendedDaemonSetReplicaSet {
	var list v1alpha1.ExtendedDaemonSetReplicaSetList
	g.Expect(env.Client.List(s.ctx, &list, client.InNamespace(eds.Namespace),
		client.MatchingLabels{v1alpha1.ExtendedDaemonSetNameLabel: eds.Name})).To(gomega.Succeed())
	return list.Items
}

func replicaSetNames(sets []v1alpha1.ExtendedDaemonSetReplicaSet) []string {
	names := make([]string, len(sets))
	for i := range sets {
		names[i] = sets[i].Name
	}
	slices.Sort(names)
	return names
}

// annotate sets an annotation on obj, which may have none yet.
func annotate(obj metav1.Object, key, value string) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[key] = value
	obj.SetAnnotations(annotations)
}
