package helm

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/simcluster"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

// TestInstallUpgradeUninstall installs the chart on a simulated cluster,
// upgrades it with changed values and uninstalls it. The manager's own
// Deployment never runs there: the simulated cluster runs no deployment
// controller, and its image is not pulled by fake nodes. So the test checks
// what the API server accepted and stores, object by object, not a running
// controller; the end-to-end tests run the manager itself.
func TestInstallUpgradeUninstall(t *testing.T) {
	testenv.RequireAssets(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cluster, err := simcluster.Start(ctx, simcluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cluster.Stop(); err != nil {
			t.Error(err)
		}
	})
	c, err := client.New(cluster.Config(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	kube := []string{"--kubeconfig", cluster.KubeconfigPath(), "-n", namespace}

	// Install: every object helm template renders is in the cluster, the
	// namespace too (--create-namespace).
	mustHelm(t, append([]string{"install", release, chartDir(), "--create-namespace", "--wait=false"}, kube...)...)
	installed := template(t)
	expectPresent(ctx, t, c, installed)
	expectPresent(ctx, t, c, []*unstructured.Unstructured{object("v1", "Namespace", "", namespace)})

	// Upgrade with changed values, a ServiceMonitor among them on a
	// stand-in of its CRD.
	if _, err := envtest.InstallCRDs(cluster.Config(), envtest.CRDInstallOptions{
		Paths: []string{"testdata/servicemonitor-crd.yaml"}, ErrorIfPathMissing: true,
	}); err != nil {
		t.Fatal(err)
	}
	upgrade := []string{
		"--set", "replicas=2",
		"--set", "podDisruptionBudget.enabled=true",
		"--set", "manager.kubeAPIQPS=100",
		"--set", "manager.watchNamespaces={team-a,team-b}",
		"--set", "resources.limits.memory=1Gi",
		"--set", "metrics.serviceMonitor.enabled=true",
		"--set", "metrics.serviceMonitor.labels.release=kube-prometheus-stack",
	}
	mustHelm(t, append(append([]string{"upgrade", release, chartDir(), "--wait=false"}, kube...), upgrade...)...)
	upgraded := template(t, upgrade...)
	expectPresent(ctx, t, c, upgraded)
	deploy := get(ctx, t, c, find(t, upgraded, "Deployment", release+"-controller-manager"))
	if replicas := field(deploy.Object, "spec", "replicas"); replicas != int64(2) {
		t.Errorf("Deployment replicas %v after the upgrade, want 2", replicas)
	}
	stored := container(t, deploy)
	gotArgs, _ := field(stored, "args").([]any)
	for _, want := range []string{"--kube-api-qps=100", "--watch-namespaces=team-a,team-b"} {
		if !slices.Contains(gotArgs, any(want)) {
			t.Errorf("Deployment args %v after the upgrade lack %s", gotArgs, want)
		}
	}
	if memory := field(stored, "resources", "limits", "memory"); memory != "1Gi" {
		t.Errorf("memory limit %v after the upgrade, want 1Gi", memory)
	}
	pdb := get(ctx, t, c, object("policy/v1", "PodDisruptionBudget", namespace, release+"-controller-manager"))
	if maxUnavailable := field(pdb.Object, "spec", "maxUnavailable"); maxUnavailable != int64(1) {
		t.Errorf("PodDisruptionBudget maxUnavailable %v, want 1", maxUnavailable)
	}
	monitor := get(ctx, t, c, object("monitoring.coreos.com/v1", "ServiceMonitor", namespace, release+"-controller-manager-metrics"))
	if label := monitor.GetLabels()["release"]; label != "kube-prometheus-stack" {
		t.Errorf("ServiceMonitor label release %q, want kube-prometheus-stack", label)
	}

	// Uninstall: every object of the release is gone, the CRDs stay (Helm
	// never deletes what it installed from crds/), so every
	// ExtendedDaemonSet with them.
	mustHelm(t, append([]string{"uninstall", release, "--wait"}, kube...)...)
	for _, obj := range upgraded {
		if obj.GetKind() == "CustomResourceDefinition" {
			continue
		}
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopy())
		if !apierrors.IsNotFound(err) {
			t.Errorf("%s after helm uninstall: want NotFound, got %v", key(obj), err)
		}
	}
	var crds []*unstructured.Unstructured
	for _, obj := range installed {
		if obj.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, obj)
		}
	}
	if len(crds) != 3 {
		t.Fatalf("the chart renders %d CRDs, want 3", len(crds))
	}
	expectPresent(ctx, t, c, crds)
}

// object is an empty object naming kind/namespace/name.
func object(apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(kind)
	obj.SetNamespace(namespace)
	obj.SetName(name)
	return obj
}

// get reads the stored version of obj, failing the test when it is missing.
func get(ctx context.Context, t *testing.T, c client.Client, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	stored := object(obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace(), obj.GetName())
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), stored); err != nil {
		t.Fatalf("%s: %v", key(obj), err)
	}
	return stored
}

// expectPresent fails t for each object the API server does not have, or
// has with other labels than rendered: a sign it is not the release's.
func expectPresent(ctx context.Context, t *testing.T, c client.Client, objs []*unstructured.Unstructured) {
	t.Helper()
	var missing []string
	for _, obj := range objs {
		stored := object(obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace(), obj.GetName())
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), stored); err != nil {
			missing = append(missing, fmt.Sprintf("%s: %v", key(obj), err))
			continue
		}
		for k, v := range obj.GetLabels() {
			if stored.GetLabels()[k] != v {
				t.Errorf("%s stored with label %s=%q, rendered %q", key(obj), k, stored.GetLabels()[k], v)
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("not in the cluster:\n%s", strings.Join(missing, "\n"))
	}
}
