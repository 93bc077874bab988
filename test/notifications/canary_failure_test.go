package notifications

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/simcluster"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/managerproc"
)

const (
	namespace = "default"
	// quiet is how long no second copy of an event may arrive: the
	// manager would send a repeat within a reconcile or two.
	quiet   = 10 * time.Second
	timeout = 2 * time.Minute
	poll    = 250 * time.Millisecond
)

// A crash-looping canary fails, and its failure reaches the receiver of a
// Flux Alert once, through the real notification-controller, with the
// template's revision and the Details as metadata; the manager sent the
// token that keeps this transition apart from others.
func TestCanaryFailureReachesFluxAlertOnce(t *testing.T) {
	testenv.RequireAssets(t)
	g := gomega.NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := t.TempDir()

	manager := filepath.Join(dir, "manager")
	if err := managerproc.Build(ctx, manager); err != nil {
		t.Fatal(err)
	}
	cluster, err := simcluster.Start(ctx, simcluster.Options{
		Nodes:   3,
		CRDDirs: []string{filepath.Join(testenv.RepoRoot(), "config", "crd", "bases")},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			cluster.DumpLogs(testWriter{t}, 20)
		}
		if err := cluster.Stop(); err != nil {
			t.Error(err)
		}
	}()
	scheme := testenv.Scheme()
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	c, err := client.New(cluster.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	c = client.WithFieldOwner(c, "notifications-test")
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "flux-system"}}); err != nil {
		t.Fatal(err)
	}
	installFluxCRDs(ctx, t, c)

	receiver, received := startReceiver(t)
	createAlert(ctx, t, c, namespace, receiver.URL)
	eventsAddr := startNotificationController(ctx, t, cluster.KubeconfigPath(), dir)
	proxy, sent := startRecordingProxy(t, eventsAddr)

	mgr, err := managerproc.Start(ctx, managerproc.Options{
		Name: "manager", Binary: manager, Kubeconfig: cluster.KubeconfigPath(),
		LogPath: filepath.Join(dir, "manager.log"), LeaderElectionNamespace: namespace,
		Args: []string{"--events-addr=" + proxy.URL},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := mgr.Stop(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("manager log: %s", mgr.LogPath())
		}
	}()

	eds := agent("v1")
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(1)), Duration: &metav1.Duration{Duration: 5 * time.Minute},
		AutoFail: &v1alpha1.CanaryAutoFail{MaxRestarts: ptr.To[int32](2)},
	}
	g.Expect(c.Create(ctx, eds)).To(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(eds), eds)).To(gomega.Succeed())
		g.Expect(conditions.IsReady(eds)).To(gomega.BeTrue())
	}).WithTimeout(timeout).WithPolling(poll).Should(gomega.Succeed())

	g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(eds), eds); err != nil {
			return err
		}
		eds.Spec.Template.Spec.Containers[0].Image = image("v2")
		return c.Update(ctx, eds)
	})).To(gomega.Succeed())
	var canary v1alpha1.CanaryStatus
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(eds), eds)).To(gomega.Succeed())
		g.Expect(eds.Status.Canary).NotTo(gomega.BeNil())
		canary = *eds.Status.Canary.DeepCopy()
		if !canary.Failed {
			crash(ctx, c, eds.Namespace, canary.ReplicaSet)
		}
		g.Expect(canary.Failed).To(gomega.BeTrue())
	}).WithTimeout(timeout).WithPolling(time.Second).Should(gomega.Succeed())
	rs := &v1alpha1.ExtendedDaemonSetReplicaSet{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: canary.ReplicaSet}, rs)).To(gomega.Succeed())

	// The receiver gets the failure, once.
	g.Eventually(func() []postedEvent { return received.withReason("CanaryFailed") }).
		WithTimeout(timeout).WithPolling(poll).ShouldNot(gomega.BeEmpty(), "events received: %v", received.reasons())
	g.Consistently(func() []postedEvent { return received.withReason("CanaryFailed") }).
		WithTimeout(quiet).WithPolling(poll).Should(gomega.HaveLen(1))
	got := received.withReason("CanaryFailed")[0]
	g.Expect(got.InvolvedObject.Kind).To(gomega.Equal("ExtendedDaemonSet"), describe([]postedEvent{got}))
	g.Expect(got.InvolvedObject.Namespace).To(gomega.Equal(namespace))
	g.Expect(got.InvolvedObject.Name).To(gomega.Equal(eds.Name))
	g.Expect(got.Severity).To(gomega.Equal("error"))
	g.Expect(got.ReportingController).To(gomega.Equal("extendeddaemonset-controller"))
	g.Expect(got.Message).To(gomega.Equal("canary " + canary.ReplicaSet + " failed: CrashLoopBackOff; its nodes go back to " + eds.Status.ActiveReplicaSet))
	// The notification-controller strips our group's prefix, and keeps
	// the token to itself.
	g.Expect(got.Metadata).To(gomega.HaveKeyWithValue("revision", rs.Spec.TemplateGeneration))
	g.Expect(got.Metadata).To(gomega.HaveKeyWithValue("detail", gomega.ContainSubstring("restarted 3 times")))
	g.Expect(got.Metadata).NotTo(gomega.HaveKey("token"))

	// What the manager posted: the same event, its metadata under our
	// group's prefix, with the token naming the canary's replica set and
	// instance.
	posted := sent.withReason("CanaryFailed")
	g.Expect(posted).To(gomega.HaveLen(1), describe(posted))
	g.Expect(posted[0].Metadata).To(gomega.Equal(map[string]string{
		"extendeddaemonset.io/revision": rs.Spec.TemplateGeneration,
		"extendeddaemonset.io/token":    "CanaryFailed/replicaSet=" + canary.ReplicaSet + "/instance=" + canary.Instance,
		"extendeddaemonset.io/detail":   got.Metadata["detail"],
	}))
	g.Expect(posted[0].InvolvedObject.APIVersion).To(gomega.Equal("extendeddaemonset.io/v1alpha1"))
}

func image(version string) string { return "registry.example/agent:" + version }

func agent(version string) *v1alpha1.ExtendedDaemonSet {
	labels := map[string]string{"app": "agent"}
	return &v1alpha1.ExtendedDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: namespace},
		Spec: v1alpha1.ExtendedDaemonSetSpec{
			Selector: &v1alpha1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: image(version)}}},
			},
		},
	}
}

// crash reports the live pod of replica set rs crash-looping, as a
// kubelet would; the next poll tries again when the write does not land.
func crash(ctx context.Context, c client.Client, namespace, rs string) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels{v1alpha1.ExtendedDaemonSetReplicaSetNameLabel: rs}); err != nil {
		return
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.DeletionTimestamp != nil || len(pod.Status.ContainerStatuses) == 0 {
			continue
		}
		pod.Status.ContainerStatuses[0].RestartCount = 3
		pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
		_ = c.Status().Update(ctx, pod)
	}
}

// testWriter writes to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
