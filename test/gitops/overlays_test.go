package gitops

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/extendeddaemonset/extendeddaemonset/analysis"
	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/prometheus"
)

// deployable is a kustomization users deploy, and the namespace it deploys
// to; the base has none and is applied to baseNamespace.
type deployable struct{ dir, namespace string }

const baseNamespace = "gitops-base"

var deployables = []deployable{
	{"kustomize/base", ""},
	{"kustomize/overlays/staging", "staging"},
	{"kustomize/overlays/production", "production"},
}

// Every kustomization, rendered as Flux and Argo CD render it, is accepted by
// the API server as a server-side apply, so a field renamed in the CRD or a
// CEL rule the examples break fails here rather than in a user's sync.
func TestKustomizationsApplyServerSideDryRun(t *testing.T) {
	ctx := context.Background()
	for _, d := range deployables {
		t.Run(d.dir, func(t *testing.T) {
			objs := render(t, d.dir)
			want := d.namespace
			if want == "" {
				want = baseNamespace
				ensureNamespace(ctx, t, want)
			}
			var namespaces []string
			for _, ns := range ofKind(objs, "Namespace") {
				namespaces = append(namespaces, ns.GetName())
				ensureNamespace(ctx, t, ns.GetName())
			}
			// Flux applies only what the overlay renders, so the overlay
			// brings its own namespace.
			if d.namespace != "" && (len(namespaces) != 1 || namespaces[0] != d.namespace) {
				t.Errorf("renders namespaces %v, want exactly [%s]", namespaces, d.namespace)
			}
			kinds := map[string]int{}
			for _, obj := range objs {
				if obj.GetKind() == "Namespace" {
					continue
				}
				if d.namespace == "" {
					obj.SetNamespace(baseNamespace)
				}
				if obj.GetNamespace() != want {
					t.Errorf("%s %s goes to namespace %q, want %q", obj.GetKind(), obj.GetName(), obj.GetNamespace(), want)
				}
				if err := dryRunApply(ctx, obj); err != nil {
					t.Errorf("the API server refuses %s %s: %v", obj.GetKind(), obj.GetName(), err)
				}
				kinds[obj.GetKind()]++
			}
			for _, kind := range []string{"ExtendedDaemonSet", "ServiceAccount", "ConfigMap"} {
				if kinds[kind] != 1 {
					t.Errorf("renders %d %s, want 1", kinds[kind], kind)
				}
			}
		})
	}
}

// The dry run above would be worthless if the server accepted what it does
// not understand: a field the schema lacks and a broken CEL rule are refused.
func TestDryRunRefusesDrift(t *testing.T) {
	ctx := context.Background()
	ensureNamespace(ctx, t, "staging")
	for name, tc := range map[string]struct {
		mutate func(obj map[string]any) error
		want   string
	}{
		"unknown field": {
			mutate: func(obj map[string]any) error {
				return unstructured.SetNestedField(obj, "2m", "spec", "strategy", "canary", "canaryDuration")
			},
			want: "canaryDuration",
		},
		"CEL rule": {
			mutate: func(obj map[string]any) error {
				return unstructured.SetNestedField(obj, "1h", "spec", "strategy", "canary", "noRestartsDuration")
			},
			want: "noRestartsDuration must not be longer than duration",
		},
	} {
		t.Run(name, func(t *testing.T) {
			eds := ofKind(render(t, "kustomize/overlays/staging"), "ExtendedDaemonSet")[0]
			if err := tc.mutate(eds.Object); err != nil {
				t.Fatal(err)
			}
			err := dryRunApply(ctx, eds)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("dry run: got %v, want an error about %q", err, tc.want)
			}
		})
	}
}

// The overlays only tune how a version is judged, never what runs: the pod
// template staging validates is the one production gets.
func TestOverlaysChangeOnlyTheRollout(t *testing.T) {
	base := theExtendedDaemonSet(t, "kustomize/base")
	for _, dir := range []string{"kustomize/overlays/staging", "kustomize/overlays/production"} {
		eds := theExtendedDaemonSet(t, dir)
		if !equality.Semantic.DeepEqual(eds.Spec.Template, base.Spec.Template) {
			t.Errorf("%s changes the pod template of the base", dir)
		}
		if !equality.Semantic.DeepEqual(eds.Spec.Selector, base.Spec.Selector) {
			t.Errorf("%s changes the selector of the base", dir)
		}
	}
}

func TestStagingJudgesFastAndLoosely(t *testing.T) {
	base := theExtendedDaemonSet(t, "kustomize/base").Spec.Strategy.Canary
	staging := theExtendedDaemonSet(t, "kustomize/overlays/staging").Spec.Strategy.Canary
	if staging.Replicas == nil || *staging.Replicas != intstr.FromInt32(1) {
		t.Errorf("staging canary replicas = %v, want 1", staging.Replicas)
	}
	if got := canaryDuration(staging); got != 2*time.Minute {
		t.Errorf("staging canary duration = %s, want 2m", got)
	}
	baseErrors, stagingErrors := errorRate(t, base), errorRate(t, staging)
	if *stagingErrors.ThresholdRange.Max <= *baseErrors.ThresholdRange.Max {
		t.Errorf("staging error rate max %v is not looser than the base's %v",
			*stagingErrors.ThresholdRange.Max, *baseErrors.ThresholdRange.Max)
	}
	if *stagingErrors.Baseline.MaxRelativeIncrease <= *baseErrors.Baseline.MaxRelativeIncrease {
		t.Errorf("staging baseline maxRelativeIncrease %v is not looser than the base's %v",
			*stagingErrors.Baseline.MaxRelativeIncrease, *baseErrors.Baseline.MaxRelativeIncrease)
	}
	if *staging.Analysis.FailureLimit <= *base.Analysis.FailureLimit {
		t.Errorf("staging failureLimit %d is not looser than the base's %d",
			*staging.Analysis.FailureLimit, *base.Analysis.FailureLimit)
	}
}

func TestProductionJudgesLongerAndStrictly(t *testing.T) {
	staging := theExtendedDaemonSet(t, "kustomize/overlays/staging").Spec.Strategy.Canary
	production := theExtendedDaemonSet(t, "kustomize/overlays/production").Spec.Strategy.Canary
	if r := production.Replicas; r == nil || r.Type != intstr.String || !strings.HasSuffix(r.StrVal, "%") {
		t.Errorf("production canary replicas = %v, want a percentage of the nodes", r)
	}
	if canaryDuration(production) <= canaryDuration(staging) {
		t.Errorf("production canary duration %s is not longer than staging's %s",
			canaryDuration(production), canaryDuration(staging))
	}
	stagingErrors, productionErrors := errorRate(t, staging), errorRate(t, production)
	if *productionErrors.ThresholdRange.Max >= *stagingErrors.ThresholdRange.Max {
		t.Errorf("production error rate max %v is not stricter than staging's %v",
			*productionErrors.ThresholdRange.Max, *stagingErrors.ThresholdRange.Max)
	}
	if *productionErrors.Baseline.MaxRelativeIncrease >= *stagingErrors.Baseline.MaxRelativeIncrease {
		t.Errorf("production baseline maxRelativeIncrease %v is not stricter than staging's %v",
			*productionErrors.Baseline.MaxRelativeIncrease, *stagingErrors.Baseline.MaxRelativeIncrease)
	}
	if *production.Analysis.FailureLimit >= *staging.Analysis.FailureLimit {
		t.Errorf("production failureLimit %d is not stricter than staging's %d",
			*production.Analysis.FailureLimit, *staging.Analysis.FailureLimit)
	}
	if *production.AutoPause.MaxRestarts >= *staging.AutoPause.MaxRestarts {
		t.Errorf("production autoPause.maxRestarts %d is not stricter than staging's %d",
			*production.AutoPause.MaxRestarts, *staging.AutoPause.MaxRestarts)
	}
	if !autoFails(production) || production.AutoFail.CanaryTimeout == nil {
		t.Error("production canary has no autoFail.canaryTimeout: a paused canary would hold the sync forever")
	}
	for _, m := range staging.Analysis.Metrics {
		if metric(production, m.Name) == nil {
			t.Errorf("production drops the %s check that staging runs", m.Name)
		}
	}
}

// The generated ConfigMap's hashed name reaches the pod template (so a new
// configuration is a new version, judged by the canary), and the previous
// one survives the sync that replaces it (so stable pods can still start).
func TestGeneratedConfigMapOutlivesItsRollout(t *testing.T) {
	for _, d := range deployables {
		objs := render(t, d.dir)
		all := extendedDaemonSets(t, objs)
		if len(all) != 1 {
			t.Fatalf("%s renders %d ExtendedDaemonSets, want 1", d.dir, len(all))
		}
		eds := all[0]
		var volume *corev1.ConfigMapVolumeSource
		for _, v := range eds.Spec.Template.Spec.Volumes {
			if v.ConfigMap != nil {
				volume = v.ConfigMap
			}
		}
		if volume == nil {
			t.Fatalf("%s: the pod template mounts no ConfigMap", d.dir)
		}
		var configMap *unstructured.Unstructured
		for _, cm := range ofKind(objs, "ConfigMap") {
			if cm.GetName() == volume.Name {
				configMap = cm
			}
		}
		if configMap == nil {
			t.Errorf("%s: the pod template mounts ConfigMap %s, which the kustomization does not render", d.dir, volume.Name)
			continue
		}
		if configMap.GetName() == "log-shipper-config" {
			t.Errorf("%s: ConfigMap %s has no content hash, so a new configuration would not start a canary", d.dir, configMap.GetName())
		}
		for key, want := range map[string]string{
			"kustomize.toolkit.fluxcd.io/prune":  "disabled",
			"argocd.argoproj.io/sync-options":    "Prune=false",
			"argocd.argoproj.io/compare-options": "IgnoreExtraneous",
		} {
			if got := configMap.GetAnnotations()[key]; got != want {
				t.Errorf("%s: ConfigMap annotation %s = %q, want %q", d.dir, key, got, want)
			}
		}
	}
}

// The schema cannot check a query template: every metric of every overlay
// renders, for the canary and for its baseline, to PromQL that promtool
// parses, as the controller would send it.
func TestAnalysisQueriesAreValidPromQL(t *testing.T) {
	promtool, err := prometheus.PromtoolPath()
	if err != nil {
		t.Fatal(err)
	}
	type rule struct {
		Record string `json:"record"`
		Expr   string `json:"expr"`
	}
	var rules []rule
	for _, d := range deployables {
		eds := theExtendedDaemonSet(t, d.dir)
		canary := eds.Spec.Strategy.Canary
		vars := analysis.Vars{
			Target: analysis.Target{
				Namespace: eds.Namespace, Name: eds.Name,
				CanaryReplicaSet: eds.Name + "-new", StableReplicaSet: eds.Name + "-old",
				CanaryPods:  []string{eds.Name + "-new-a", eds.Name + "-new-b"},
				StablePods:  []string{eds.Name + "-old-a", eds.Name + "-old-b"},
				CanaryNodes: []string{"node-a", "node-b"},
			},
			Interval: analysisInterval(canary.Analysis),
			Window:   canaryDuration(canary),
		}
		for _, m := range canary.Analysis.Metrics {
			perPod := m.Baseline != nil && m.Baseline.MannWhitney != nil
			query, err := analysis.QueryOf(m, perPod)
			if err != nil {
				t.Errorf("%s: %v", d.dir, err)
				continue
			}
			targets := map[string]analysis.Vars{"canary": vars}
			if m.Baseline != nil {
				targets["baseline"] = vars.Baseline()
			}
			for target, v := range targets {
				expr, err := analysis.Render(query, v)
				if err != nil {
					t.Errorf("%s: metric %s (%s): %v", d.dir, m.Name, target, err)
					continue
				}
				rules = append(rules, rule{Record: fmt.Sprintf("gitops:query_%d", len(rules)), Expr: expr})
			}
		}
	}
	if len(rules) < 6 {
		t.Fatalf("rendered %d queries, want at least the restarts and error-rate metrics of 3 kustomizations", len(rules))
	}
	file, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "canary", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "queries.yaml")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s\nqueries:\n%s", err, out, file)
	}
}

func dryRunApply(ctx context.Context, obj *unstructured.Unstructured) error {
	return k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj),
		client.FieldOwner("gitops-test"), client.DryRunAll)
}

// ensureNamespace really creates a namespace: a dry-run object in a namespace
// that does not exist is refused.
func ensureNamespace(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}

// canaryDuration is how long an auto canary runs, with the controller's default.
func canaryDuration(c *v1alpha1.CanaryStrategy) time.Duration {
	if c.Duration != nil {
		return c.Duration.Duration
	}
	d, err := time.ParseDuration(v1alpha1.DefaultCanaryDuration)
	if err != nil {
		panic(err)
	}
	return d
}

// analysisInterval is the time between two measurements, with the schema's
// default.
func analysisInterval(a *v1alpha1.CanaryAnalysis) time.Duration {
	if a.Interval != nil {
		return a.Interval.Duration
	}
	return time.Minute
}

// autoFails says whether autoFail is on (its schema default is enabled).
func autoFails(c *v1alpha1.CanaryStrategy) bool {
	return c.AutoFail != nil && (c.AutoFail.Enabled == nil || *c.AutoFail.Enabled)
}

func metric(c *v1alpha1.CanaryStrategy, name string) *v1alpha1.AnalysisMetric {
	for i := range c.Analysis.Metrics {
		if c.Analysis.Metrics[i].Name == name {
			return &c.Analysis.Metrics[i]
		}
	}
	return nil
}

// errorRate returns the error-rate metric, which must have a threshold and a
// baseline for the overlays to tune.
func errorRate(t *testing.T, c *v1alpha1.CanaryStrategy) *v1alpha1.AnalysisMetric {
	t.Helper()
	m := metric(c, "error-rate")
	if m == nil || m.Preset != v1alpha1.MetricPresetErrorRate || m.ThresholdRange == nil || m.ThresholdRange.Max == nil ||
		m.Baseline == nil || m.Baseline.MaxRelativeIncrease == nil {
		t.Fatalf("no error-rate metric with the errorRate preset, a thresholdRange.max and a baseline.maxRelativeIncrease: %+v", m)
	}
	return m
}
