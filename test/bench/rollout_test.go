package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/simcluster"
)

// Both controllers get the same client budget, so the comparison is of
// their logic rather than of their rate limits.
const (
	clientQPS   = 50
	clientBurst = 100
)

// figures are one controller's measurements.
type figures struct {
	create, update                  time.Duration
	podWrites, ownWrites, evtWrites int
}

// BenchmarkRollingUpdate creates a node agent on every node of a simulated
// cluster, then rolls a new template out with maxUnavailable 10%, once with
// the native DaemonSet controller and once with ExtendedDaemonSet, and
// prints both with their ratio. BENCH_NODES sets the cluster size (200).
// Run it with `make bench`.
func BenchmarkRollingUpdate(b *testing.B) {
	nodes := 200
	if v := os.Getenv("BENCH_NODES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("BENCH_NODES=%q is not a positive number", v)
		}
		nodes = n
	}
	ctx := b.Context()
	qps := []string{fmt.Sprintf("--kube-api-qps=%d", clientQPS), fmt.Sprintf("--kube-api-burst=%d", clientBurst)}
	cluster, err := simcluster.Start(ctx, simcluster.Options{
		Nodes:            nodes,
		CRDDirs:          []string{harness.RepoRoot() + "/config/crd/bases"},
		ExtraControllers: []string{"daemonset-controller"},
		ExtraArgs:        map[string][]string{"kube-controller-manager": qps},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cluster.Stop() })
	cfg := cluster.Config()
	cfg.QPS, cfg.Burst = clientQPS, clientBurst
	ctrls, err := harness.StartControllers(ctx, cfg, controllers.Options{MaxConcurrentReconciles: 4}, logr.Discard())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ctrls.Stop() })

	admin := cluster.Config()
	kube := kubernetes.NewForConfigOrDie(admin)
	c, err := client.New(admin, client.Options{Scheme: harness.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	var native, ours figures
	for b.Loop() {
		native = measure(ctx, b, kube, &daemonSetRun{c: c, kube: kube})
		ours = measure(ctx, b, kube, &extendedDaemonSetRun{c: c})
	}
	b.ReportMetric(ours.update.Seconds(), "eds-update-s")
	b.ReportMetric(native.update.Seconds(), "ds-update-s")
	printTable(nodes, native, ours)
}

// run is one controller's workload: create it, roll a new template, delete.
type run interface {
	name() string
	create(ctx context.Context, namespace string) error
	update(ctx context.Context) error
	// done reports whether every desired pod runs the latest template and
	// is available.
	done(ctx context.Context) (bool, error)
	kinds() []string
	// remove deletes the workload, its pods by garbage collection.
	remove(ctx context.Context) error
}

func measure(ctx context.Context, b *testing.B, kube kubernetes.Interface, r run) figures {
	b.Helper()
	ns := "bench-" + strings.ToLower(r.name())
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	var f figures
	start := time.Now()
	if err := r.create(ctx, ns); err != nil {
		b.Fatal(err)
	}
	waitDone(ctx, b, r)
	f.create = time.Since(start)

	before, err := scrapeWrites(ctx, kube)
	if err != nil {
		b.Fatal(err)
	}
	start = time.Now()
	if err := r.update(ctx); err != nil {
		b.Fatal(err)
	}
	waitDone(ctx, b, r)
	f.update = time.Since(start)
	after, err := scrapeWrites(ctx, kube)
	if err != nil {
		b.Fatal(err)
	}
	f.podWrites, f.ownWrites, f.evtWrites = after.since(before).controllerWrites(r.kinds()...)

	// The next run starts on empty nodes. No namespace controller runs in
	// the simulated cluster, so the workload goes and its pods are waited for.
	if err := r.remove(ctx); err != nil {
		b.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 0, nil
	})
	if err != nil {
		b.Fatalf("pods of %s not deleted: %v", r.name(), err)
	}
	return f
}

func waitDone(ctx context.Context, b *testing.B, r run) {
	b.Helper()
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 20*time.Minute, true, r.done)
	if err != nil {
		b.Fatalf("%s did not roll out: %v", r.name(), err)
	}
}

func printTable(nodes int, native, ours figures) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "%d nodes, maxUnavailable 10%%, client QPS %d\tDaemonSet\tExtendedDaemonSet\tratio\t\n", nodes, clientQPS)
	row := func(name string, a, b float64, unit string) {
		ratio := "-"
		if a > 0 {
			ratio = fmt.Sprintf("%.2f", b/a)
		}
		fmt.Fprintf(w, "%s\t%.1f%s\t%.1f%s\t%s\t\n", name, a, unit, b, unit, ratio)
	}
	row("create, all pods available", native.create.Seconds(), ours.create.Seconds(), " s")
	row("rolling update", native.update.Seconds(), ours.update.Seconds(), " s")
	row("update: pod creates+deletes", float64(native.podWrites), float64(ours.podWrites), "")
	row("update: own-kind writes", float64(native.ownWrites), float64(ours.ownWrites), "")
	row("update: event writes", float64(native.evtWrites), float64(ours.evtWrites), "")
	_ = w.Flush()
}

// agentTemplate is a node agent's pod template; version changes it.
func agentTemplate(version string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "agent", Image: "registry.example/agent:" + version,
		}}},
	}
}

var tenPercent = intstr.FromString("10%")

type daemonSetRun struct {
	c    client.Client
	kube kubernetes.Interface
	ds   *appsv1.DaemonSet
}

func (r *daemonSetRun) name() string    { return "DaemonSet" }
func (r *daemonSetRun) kinds() []string { return []string{"daemonsets", "controllerrevisions"} }

func (r *daemonSetRun) create(ctx context.Context, namespace string) error {
	r.ds = &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: namespace},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: agentTemplate("v1"),
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{
				Type:          appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &tenPercent},
			},
		},
	}
	return r.c.Create(ctx, r.ds)
}

func (r *daemonSetRun) update(ctx context.Context) error {
	if err := r.c.Get(ctx, client.ObjectKeyFromObject(r.ds), r.ds); err != nil {
		return err
	}
	r.ds.Spec.Template = agentTemplate("v2")
	return r.c.Update(ctx, r.ds)
}

func (r *daemonSetRun) remove(ctx context.Context) error {
	return r.c.Delete(ctx, r.ds, client.PropagationPolicy(metav1.DeletePropagationBackground))
}

func (r *daemonSetRun) done(ctx context.Context) (bool, error) {
	ds, err := r.kube.AppsV1().DaemonSets(r.ds.Namespace).Get(ctx, r.ds.Name, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	s := ds.Status
	return s.ObservedGeneration == ds.Generation && s.DesiredNumberScheduled > 0 &&
		s.UpdatedNumberScheduled == s.DesiredNumberScheduled && s.NumberAvailable == s.DesiredNumberScheduled &&
		s.CurrentNumberScheduled == s.DesiredNumberScheduled && s.NumberUnavailable == 0, nil
}

type extendedDaemonSetRun struct {
	c   client.Client
	eds *v1alpha1.ExtendedDaemonSet
}

func (r *extendedDaemonSetRun) name() string { return "ExtendedDaemonSet" }
func (r *extendedDaemonSetRun) kinds() []string {
	return []string{"extendeddaemonsets", "extendeddaemonsetreplicasets"}
}

func (r *extendedDaemonSetRun) create(ctx context.Context, namespace string) error {
	r.eds = &v1alpha1.ExtendedDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: namespace},
		Spec: v1alpha1.ExtendedDaemonSetSpec{
			Template: agentTemplate("v1"),
			Strategy: v1alpha1.ExtendedDaemonSetStrategy{
				RollingUpdate: v1alpha1.RollingUpdateStrategy{MaxUnavailable: &tenPercent},
			},
		},
	}
	return r.c.Create(ctx, r.eds)
}

func (r *extendedDaemonSetRun) update(ctx context.Context) error {
	if err := r.c.Get(ctx, client.ObjectKeyFromObject(r.eds), r.eds); err != nil {
		return err
	}
	r.eds.Spec.Template = agentTemplate("v2")
	return r.c.Update(ctx, r.eds)
}

func (r *extendedDaemonSetRun) remove(ctx context.Context) error {
	return r.c.Delete(ctx, r.eds, client.PropagationPolicy(metav1.DeletePropagationBackground))
}

func (r *extendedDaemonSetRun) done(ctx context.Context) (bool, error) {
	eds := &v1alpha1.ExtendedDaemonSet{}
	if err := r.c.Get(ctx, client.ObjectKeyFromObject(r.eds), eds); err != nil {
		return false, err
	}
	s := eds.Status
	ready := false
	for _, c := range s.Conditions {
		if c.Type == v1alpha1.ReadyCondition {
			ready = c.Status == metav1.ConditionTrue
		}
	}
	return ready && s.ObservedGeneration == eds.Generation && s.Desired > 0 &&
		s.UpToDate == s.Desired && s.Available == s.Desired && s.Current == s.Desired, nil
}
