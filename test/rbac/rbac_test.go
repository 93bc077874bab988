package rbac

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/rbacinstall"
)

// The manager's identity as config/default names it.
const (
	managerNamespace = rbacinstall.Namespace
	serviceAccount   = rbacinstall.ServiceAccount
)

const (
	eventually = time.Minute
	polling    = 200 * time.Millisecond
)

// installRBAC installs the manager's ServiceAccount, roles and bindings
// as config/default ships them.
func installRBAC() error { return rbacinstall.Install(context.Background(), k8s) }

// A canary rollout with a metric analysis completes with the manager's
// grants alone: the caches sync, replica sets and pods are written, the
// analysis reads the Prometheus credentials from its Secret, the
// migration check reads a DaemonSet, and events are recorded.
func TestCanaryRolloutWithTheShippedRoles(t *testing.T) {
	g := gomega.NewWithT(t)
	g.SetDefaultEventuallyTimeout(eventually)
	g.SetDefaultEventuallyPollingInterval(polling)
	ctx := t.Context()
	denied := &deniedLog{}
	ctrls, err := harness.StartControllers(ctx, manager, controllers.Options{}, denied.logger())
	g.Expect(err).NotTo(gomega.HaveOccurred())
	t.Cleanup(func() { g.Expect(ctrls.Stop()).To(gomega.Succeed()) })

	ns := createNamespace(g)
	for range 2 {
		createReadyNode(t, g, ns)
	}
	prometheus := newPrometheus(t, "s3cret")
	g.Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus-credentials", Namespace: ns},
		Data:       map[string][]byte{"token": []byte("s3cret")},
	})).To(gomega.Succeed())
	eds := analyzedEDS(ns, prometheus.URL)
	g.Expect(k8s.Create(ctx, eds)).To(gomega.Succeed())
	first := waitRolledOut(g, eds, "")

	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(eds), eds)).To(gomega.Succeed())
	eds.Spec.Template.Spec.Containers[0].Image = "registry.example/agent:v2"
	g.Expect(k8s.Update(ctx, eds)).To(gomega.Succeed())
	second := waitRolledOut(g, eds, first)

	g.Expect(denied.lines()).To(gomega.BeEmpty(), "requests the roles refused")
	g.Expect(prometheus.authorized.Load()).To(gomega.BeNumerically(">", 0), "the analysis measured")
	g.Expect(prometheus.refused.Load()).To(gomega.BeZero(), "every query carried the Secret's token")
	g.Eventually(func(g gomega.Gomega) {
		var events eventsv1.EventList
		g.Expect(k8s.List(ctx, &events, client.InNamespace(ns))).To(gomega.Succeed())
		g.Expect(slices.ContainsFunc(events.Items, func(e eventsv1.Event) bool {
			return e.Reason == canary.Promoted && strings.Contains(e.Note, second)
		})).To(gomega.BeTrue(), "the promotion was recorded as an event")
	}).Should(gomega.Succeed())
}

// Leader election works in the manager's namespace with the leader
// election Role alone: the lease is read, taken and, on stop, released,
// and the change of leader is told as an event.
func TestLeaderElectionWithTheShippedRole(t *testing.T) {
	g := gomega.NewWithT(t)
	g.SetDefaultEventuallyTimeout(eventually)
	g.SetDefaultEventuallyPollingInterval(polling)
	// A lease of the run's own, so that a run never finds the lease and the
	// event of an earlier one.
	leaseName := "extendeddaemonset.io-" + utilrand.String(5)
	mgr, err := ctrl.NewManager(manager, ctrl.Options{
		Scheme:                        harness.Scheme(),
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionID:              leaseName,
		LeaderElectionNamespace:       managerNamespace,
		LeaderElectionReleaseOnCancel: true,
	})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	select {
	case <-mgr.Elected():
	case err := <-done:
		t.Fatalf("the manager stopped before it was elected: %v", err)
	case <-time.After(eventually):
		cancel()
		t.Fatal("the manager was never elected")
	}
	key := client.ObjectKey{Namespace: managerNamespace, Name: leaseName}
	g.Eventually(func(g gomega.Gomega) {
		var events corev1.EventList
		g.Expect(k8s.List(t.Context(), &events, client.InNamespace(managerNamespace))).To(gomega.Succeed())
		g.Expect(slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
			return e.Reason == "LeaderElection" && e.InvolvedObject.Name == key.Name
		})).To(gomega.BeTrue(), "the new leader was recorded as an event")
	}).Should(gomega.Succeed())

	cancel()
	g.Expect(<-done).To(gomega.Succeed())
	lease := &coordinationv1.Lease{}
	g.Expect(k8s.Get(t.Context(), key, lease)).To(gomega.Succeed())
	g.Expect(ptr.Deref(lease.Spec.HolderIdentity, "")).To(gomega.BeEmpty(), "the lease was released on stop")
}

// waitRolledOut plays the scheduler and the kubelet until a replica set
// other than previous is active and rolled out, with no canary left, and
// returns its name.
func waitRolledOut(g *gomega.WithT, eds *v1alpha1.ExtendedDaemonSet, previous string) string {
	var active string
	g.Eventually(func(g gomega.Gomega) {
		runPods(g, eds.Namespace)
		latest := &v1alpha1.ExtendedDaemonSet{}
		g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(eds), latest)).To(gomega.Succeed())
		active = latest.Status.ActiveReplicaSet
		g.Expect(active).NotTo(gomega.Or(gomega.BeEmpty(), gomega.Equal(previous)))
		g.Expect(latest.Status.Canary).To(gomega.BeNil())
		ready := metaCondition(latest.Status.Conditions, v1alpha1.ReadyCondition)
		g.Expect(ready).NotTo(gomega.BeNil())
		g.Expect(ready.Status).To(gomega.Equal(metav1.ConditionTrue), ready.Message)
	}).Should(gomega.Succeed())
	return active
}

func metaCondition(conditions []metav1.Condition, kind string) *metav1.Condition {
	i := slices.IndexFunc(conditions, func(c metav1.Condition) bool { return c.Type == kind })
	if i < 0 {
		return nil
	}
	return &conditions[i]
}

// runPods does in one pass what the scheduler and the kubelet would: binds
// new pods to the node their affinity names and reports them Running and
// Ready, and finishes the deletion of terminating pods. Conflicts with the
// controllers are left to the next pass.
func runPods(g gomega.Gomega, ns string) {
	ctx := context.Background()
	var pods corev1.PodList
	g.Expect(k8s.List(ctx, &pods, client.InNamespace(ns))).To(gomega.Succeed())
	for i := range pods.Items {
		pod := &pods.Items[i]
		switch {
		case pod.DeletionTimestamp != nil:
			_ = k8s.Delete(ctx, pod, client.GracePeriodSeconds(0))
		case pod.Spec.NodeName == "":
			binding := &corev1.Binding{
				ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
				Target:     corev1.ObjectReference{Kind: "Node", Name: placement.TargetNode(pod)},
			}
			_ = k8s.SubResource("binding").Create(ctx, pod, binding)
		case pod.Status.Phase != corev1.PodRunning:
			now := metav1.Now()
			pod.Status.Phase, pod.Status.StartTime = corev1.PodRunning, &now
			pod.Status.Conditions = []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			}
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
				Name: "agent", Image: pod.Spec.Containers[0].Image, Ready: true, Started: ptr.To(true),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
			}}
			_ = k8s.Status().Update(ctx, pod)
		}
	}
}

// analyzedEDS is an agent on the test's nodes whose canary, on one node,
// is promoted after a few seconds once its metric analysis, queried with
// the credentials of Secret prometheus-credentials, succeeds. It also
// names a DaemonSet to migrate from, which does not exist: checking that
// reads DaemonSets and lists pods around the cache.
func analyzedEDS(ns, prometheusURL string) *v1alpha1.ExtendedDaemonSet {
	labels := map[string]string{"app": "agent"}
	return &v1alpha1.ExtendedDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: ns,
			Annotations: map[string]string{v1alpha1.OldDaemonSetAnnotation: "legacy-agent"}},
		Spec: v1alpha1.ExtendedDaemonSetSpec{
			Selector: &v1alpha1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{nodeLabel: ns},
					Containers:   []corev1.Container{{Name: "agent", Image: "registry.example/agent:v1"}},
				},
			},
			Strategy: v1alpha1.ExtendedDaemonSetStrategy{
				Canary: &v1alpha1.CanaryStrategy{
					Replicas: ptr.To(intstr.FromInt32(1)),
					Duration: &metav1.Duration{Duration: 3 * time.Second},
					Analysis: &v1alpha1.CanaryAnalysis{
						Provider: v1alpha1.AnalysisProvider{Prometheus: &v1alpha1.PrometheusProvider{
							Address:   prometheusURL,
							SecretRef: &corev1.LocalObjectReference{Name: "prometheus-credentials"},
						}},
						Interval: &metav1.Duration{Duration: time.Second},
						Metrics: []v1alpha1.AnalysisMetric{{
							Name: "errors", Query: "vector(0)", ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(0.0)},
						}},
					},
				},
			},
		},
	}
}

// nodeLabel carries, on the nodes of a test, the test's namespace, which
// its agent selects.
const nodeLabel = "rbac-test.extendeddaemonset.io/namespace"

// createReadyNode creates a node for the test of namespace ns, Ready and
// without the not-ready taint the API server's admission gives new nodes,
// as the node lifecycle controller would leave it.
func createReadyNode(t *testing.T, g *gomega.WithT, ns string) {
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{GenerateName: ns + "-", Labels: map[string]string{nodeLabel: ns}}}
	g.Expect(k8s.Create(ctx, node)).To(gomega.Succeed())
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), node) })
	node.Status.Conditions = []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
	}}
	g.Expect(k8s.Status().Update(ctx, node)).To(gomega.Succeed())
	node.Spec.Taints = nil
	g.Expect(k8s.Update(ctx, node)).To(gomega.Succeed())
}

// createNamespace creates a namespace of the test's own, so that tests can
// run again against the same API server. It stays: no namespace controller
// runs to finalize it.
func createNamespace(g *gomega.WithT) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "rbac-"}}
	g.Expect(k8s.Create(context.Background(), ns)).To(gomega.Succeed())
	return ns.Name
}

// prometheus answers every instant query with 0, to requests that carry
// the bearer token only.
type prometheus struct {
	*httptest.Server
	authorized, refused atomic.Int32
}

func newPrometheus(t *testing.T, token string) *prometheus {
	p := &prometheus{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			p.refused.Add(1)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		p.authorized.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"scalar","result":[%d,"0"]}}`, time.Now().Unix())
	}))
	t.Cleanup(p.Close)
	return p
}

// deniedLog keeps the log lines of requests RBAC refused: most such
// refusals (a watch, an event) are only logged, never returned.
type deniedLog struct {
	mu     sync.Mutex
	denied []string
}

func (d *deniedLog) logger() logr.Logger {
	log := funcr.New(func(prefix, args string) {
		if strings.Contains(args, "is forbidden: User") {
			d.mu.Lock()
			defer d.mu.Unlock()
			d.denied = append(d.denied, prefix+" "+args)
		}
	}, funcr.Options{})
	// client-go's informers and event broadcasters log through klog.
	klog.SetLogger(log)
	return log
}

func (d *deniedLog) lines() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.denied)
}
