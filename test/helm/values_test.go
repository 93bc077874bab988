package helm

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// deployment renders the chart with args and returns its Deployment.
func deployment(t *testing.T, args ...string) *unstructured.Unstructured {
	t.Helper()
	return find(t, template(t, args...), "Deployment", release+"-controller-manager")
}

func container(t *testing.T, deploy *unstructured.Unstructured) map[string]any {
	t.Helper()
	containers, _, err := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "containers")
	if err != nil || len(containers) != 1 {
		t.Fatalf("want one container in the Deployment, got %v (err %v)", containers, err)
	}
	return containers[0].(map[string]any)
}

func args(t *testing.T, deploy *unstructured.Unstructured) []string {
	t.Helper()
	list, _, err := unstructured.NestedStringSlice(container(t, deploy), "args")
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// configDefaultArgs are the manager's arguments in config/default.
var configDefaultArgs = []string{"--enable-leader-election", "--metrics-bind-address=:8443", "--health-probe-bind-address=:8081"}

func TestManagerValuesBecomeFlags(t *testing.T) {
	got := args(t, deployment(t,
		"--set", "manager.kubeAPIQPS=1000000", // large numbers must not print as 1e+06
		"--set", "manager.kubeAPIBurst=2000000",
		"--set", "manager.concurrent=8",
		"--set", "manager.concurrentPodWrites=64",
		"--set", "manager.watchNamespaces={team-a,team-b}",
		"--set", "manager.allowedWebhookHosts={10.0.0.0/8,hooks.internal}",
		"--set", "manager.unresponsiveNodeGrace=10m",
		"--set", "manager.logLevel=debug",
		"--set", "manager.logEncoding=console",
		"--set", "manager.extraArgs={--pprof-bind-address=:6060}",
		"--set", "leaderElection.leaseDuration=60s",
		"--set", "leaderElection.renewDeadline=50s",
		"--set", "leaderElection.retryPeriod=10s",
		"--set", "metrics.port=9443"))
	want := []string{
		"--enable-leader-election",
		"--metrics-bind-address=:9443",
		"--health-probe-bind-address=:8081",
		"--leader-election-lease-duration=60s",
		"--leader-election-renew-deadline=50s",
		"--leader-election-retry-period=10s",
		"--kube-api-qps=1000000",
		"--kube-api-burst=2000000",
		"--concurrent=8",
		"--concurrent-pod-writes=64",
		"--watch-namespaces=team-a,team-b",
		"--allowed-webhook-hosts=10.0.0.0/8,hooks.internal",
		"--unresponsive-node-grace=10m",
		"--log-level=debug",
		"--log-encoding=console",
		"--pprof-bind-address=:6060",
	}
	if !slices.Equal(got, want) {
		t.Errorf("args\n got %q\nwant %q", got, want)
	}
}

func TestNullValuesPassNoFlag(t *testing.T) {
	// The defaults leave every flag to the manager.
	if got := args(t, deployment(t)); !slices.Equal(got, configDefaultArgs) {
		t.Errorf("default args %q, want config/default's %q", got, configDefaultArgs)
	}
	if got := args(t, deployment(t, "--set", "leaderElection.enabled=false")); slices.Contains(got, "--enable-leader-election") {
		t.Errorf("leader election disabled, args %q", got)
	}
}

func TestImage(t *testing.T) {
	for _, tc := range []struct {
		name       string
		args       []string
		image      string
		pullPolicy string
	}{
		{"appVersion by default", nil, "ghcr.io/extendeddaemonset/extendeddaemonset:dev", ""},
		{"a tag", []string{"--set", "image.tag=v1.2.3"}, "ghcr.io/extendeddaemonset/extendeddaemonset:v1.2.3", ""},
		{"a digest wins over the tag", []string{"--set", "image.tag=v1.2.3", "--set", "image.digest=sha256:" + sha},
			"ghcr.io/extendeddaemonset/extendeddaemonset@sha256:" + sha, ""},
		{"a mirror and a pull policy", []string{"--set", "image.repository=mirror.example/eds", "--set", "image.pullPolicy=Always"},
			"mirror.example/eds:dev", "Always"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := container(t, deployment(t, tc.args...))
			if c["image"] != tc.image {
				t.Errorf("image %v, want %s", c["image"], tc.image)
			}
			if policy, _ := c["imagePullPolicy"].(string); policy != tc.pullPolicy {
				t.Errorf("imagePullPolicy %q, want %q", policy, tc.pullPolicy)
			}
		})
	}
}

const sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestPodValues(t *testing.T) {
	deploy := deployment(t,
		"--set", "replicas=3",
		"--set", "image.pullSecrets[0].name=regcred",
		"--set", "nodeSelector.kubernetes\\.io/os=linux",
		"--set", "tolerations[0].key=control-plane,tolerations[0].operator=Exists,tolerations[0].effect=NoSchedule",
		"--set", "priorityClassName=system-cluster-critical",
		"--set", "podAnnotations.team=platform",
		"--set", "podLabels.team=platform",
		"--set", "topologySpreadConstraints[0].maxSkew=1,topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone,topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway",
		"--set", "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=pool,affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=Exists",
		"--set", "resources.limits.memory=1Gi",
		"--set", "serviceAccount.name=custom")
	spec := deploy.Object["spec"].(map[string]any)
	pod := spec["template"].(map[string]any)["spec"].(map[string]any)
	for _, check := range []struct {
		field string
		ok    bool
	}{
		{"replicas", spec["replicas"] == int64(3)},
		{"imagePullSecrets", field(pod, "imagePullSecrets", 0, "name") == "regcred"},
		{"nodeSelector", field(pod, "nodeSelector", "kubernetes.io/os") == "linux"},
		{"tolerations", field(pod, "tolerations", 0, "key") == "control-plane"},
		{"priorityClassName", pod["priorityClassName"] == "system-cluster-critical"},
		{"topologySpreadConstraints", field(pod, "topologySpreadConstraints", 0, "maxSkew") == int64(1)},
		{"affinity", field(pod, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", 0, "matchExpressions", 0, "key") == "pool"},
		{"resources", field(pod, "containers", 0, "resources", "limits", "memory") == "1Gi"},
		{"serviceAccountName", pod["serviceAccountName"] == "custom"},
		{"pod annotation", field(spec, "template", "metadata", "annotations", "team") == "platform"},
		{"pod label", field(spec, "template", "metadata", "labels", "team") == "platform"},
		{"selector label kept", field(spec, "template", "metadata", "labels", "app.kubernetes.io/name") == "extendeddaemonset"},
	} {
		if !check.ok {
			t.Errorf("%s not rendered as set: %v", check.field, pod)
		}
	}
}

func TestPodDisruptionBudget(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		field string
		want  any
	}{
		{"maxUnavailable 1 by default", nil, "maxUnavailable", int64(1)},
		{"minAvailable", []string{"--set", "podDisruptionBudget.minAvailable=1"}, "minAvailable", int64(1)},
		{"a percentage", []string{"--set", "podDisruptionBudget.maxUnavailable=50%"}, "maxUnavailable", "50%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pdb := find(t, template(t, append([]string{"--set", "podDisruptionBudget.enabled=true"}, tc.args...)...),
				"PodDisruptionBudget", release+"-controller-manager")
			spec := pdb.Object["spec"].(map[string]any)
			if spec[tc.field] != tc.want || len(spec) != 2 {
				t.Errorf("spec %v, want %s %v and the selector only", spec, tc.field, tc.want)
			}
		})
	}
}

// field reads a nested field through maps (string keys) and lists (int
// indexes), nil when absent.
func field(obj any, path ...any) any {
	for _, step := range path {
		switch s := step.(type) {
		case string:
			m, _ := obj.(map[string]any)
			obj = m[s]
		case int:
			l, _ := obj.([]any)
			if s >= len(l) {
				return nil
			}
			obj = l[s]
		}
	}
	return obj
}
