package argocd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// healthCase is one status the controller writes, with what Argo CD and
// kstatus (Flux) make of it; an empty kstatus is not checked.
type healthCase struct {
	file    string
	status  string
	message string
	kstatus status.Status
}

// The rows of the condition contract (controllers/conditions.go), then the states around
// them, for both kinds.
var healthCases = []healthCase{
	// rolled out, all pods available
	{"eds-rolled-out.yaml", Healthy, "24/24 pods available", status.CurrentStatus},
	{
		"eds-rolled-out-malformed-override.yaml", Healthy,
		"2/2 pods available; node e2e-annotation-malformed: ignoring malformed resource overrides: " +
			"annotation resources.extendeddaemonset.io/agents.agent.agent: unexpected end of JSON input",
		status.CurrentStatus,
	},
	// canary running, analysis measuring, rolling update
	{"eds-canary-running.yaml", Progressing, "canary agent-7jtzc running on 2 nodes", status.InProgressStatus},
	{
		"eds-canary-waiting-for-analysis.yaml", Progressing,
		"canary agent-7jtzc running on 2 nodes: WaitingForAnalysis: the canary duration has elapsed; " +
			"waiting for the analysis to succeed: 0 of 2 metrics successful; " +
			"restarts: query returned no data: the metric may not exist yet or the canary pods are not scraped; " +
			"error-rate: query returned no data: the metric may not exist yet or the canary pods are not scraped",
		status.InProgressStatus,
	},
	{"eds-rolling-update.yaml", Progressing, "rolling update: 9 of 24 nodes up to date, 14 old pods left", status.InProgressStatus},
	{"eds-rolling-update-paused.yaml", Progressing, "rolling update paused: 11 of 24 nodes up to date", status.InProgressStatus},
	// canary paused: by a person, by autoPause, by its analysis, or waiting for validation
	{
		"eds-canary-auto-paused.yaml", Suspended,
		"canary agent-rcmzj paused: Error: container agent of canary pod agent-rcmzj-bsl2n restarted 2 times (autoPause.maxRestarts 1)",
		status.InProgressStatus,
	},
	{
		"eds-canary-paused-by-user.yaml", Suspended,
		"canary agent-7jtzc paused: PausedByUser: the canary is paused; unpause it to continue",
		status.InProgressStatus,
	},
	{
		"eds-canary-manual-waiting.yaml", Suspended,
		"canary agent-vw8l8 paused: WaitingForValidation: validate the canary to promote it",
		status.InProgressStatus,
	},
	{
		"eds-canary-analysis-error.yaml", Suspended,
		`canary agent-cbhj4 paused: AnalysisError: error-rate: query failed: Post "http://prometheus.monitoring:9090/api/v1/query": ` +
			"dial tcp 10.96.112.40:9090: connect: connection refused (1 errors in a row, consecutiveErrorLimit 0)",
		status.InProgressStatus,
	},
	// canary failed, by autoFail, by its analysis or by a person
	{
		"eds-canary-failed.yaml", Degraded,
		"canary agent-mdx88 failed: TimeoutExceeded: the canary has not been promoted within canaryTimeout 25s; " +
			"its nodes run the active template again until the template changes or a retry is asked for",
		status.FailedStatus,
	},
	{
		"eds-canary-failed-analysis.yaml", Degraded,
		"canary agent-h256w failed: AnalysisFailed: error-rate-vs-baseline: 0.03 within [-Inf, 0.05]; " +
			"0.03 > baseline 0.01 + 100% (0.02) (1 of 3 measurements failed, failureLimit 0); " +
			"its nodes run the active template again until the template changes or a retry is asked for",
		status.FailedStatus,
	},
	{
		"eds-canary-failed-by-user.yaml", Degraded,
		"canary agent-pgch2 failed: FailedByUser: the canary was failed by a person; " +
			"its nodes run the active template again until the template changes or a retry is asked for",
		status.FailedStatus,
	},
	// invalid spec the CRD could not catch
	{
		"eds-invalid-spec.yaml", Degraded,
		"spec.strategy.rollingUpdate: maxUnavailable and maxSurge both resolve to 0 for 24 nodes: the rolling update could never make progress",
		status.FailedStatus,
	},
	// not observed yet; kstatus reads no conditions from an object without
	// status, so that row has nothing to compare
	{"eds-no-status.yaml", Progressing, "waiting for the controller to observe generation 1", ""},
	{"eds-generation-not-observed.yaml", Progressing, "waiting for the controller to observe generation 3", status.InProgressStatus},

	{"ers-active-rolled-out.yaml", Healthy, "24/24 pods available", status.CurrentStatus},
	{"ers-canary-progressing.yaml", Progressing, "1 of 2 nodes up to date", status.InProgressStatus},
	// Argo CD shows the replica sets of earlier templates Healthy, as it
	// does a Deployment's old ReplicaSets; kstatus reads any Ready=False as
	// in progress. Neither holds a sync back: only the ExtendedDaemonSet is
	// in git, and an Application's health is that of what it syncs.
	{"ers-inactive.yaml", Healthy, "not active: 0 of its pods remain, to be replaced", status.InProgressStatus},
	{
		"ers-invalid-spec.yaml", Degraded,
		"spec.strategy.rollingUpdate: maxUnavailable and maxSurge both resolve to 0 for 24 nodes: the rolling update could never make progress",
		status.FailedStatus,
	},
}

func TestHealthOfControllerStatuses(t *testing.T) {
	for _, tc := range healthCases {
		t.Run(tc.file, func(t *testing.T) {
			obj := readFixture(t, tc.file)
			expectHealth(t, obj, tc.status, tc.message)
			if tc.kstatus != "" {
				res, err := status.Compute(obj)
				if err != nil {
					t.Fatalf("kstatus: %v", err)
				}
				if res.Status != tc.kstatus {
					t.Errorf("kstatus = %s (%s), want %s", res.Status, res.Message, tc.kstatus)
				}
			}
		})
	}
}

// Every fixture is read by a test case, so none goes stale unnoticed.
func TestEveryFixtureHasACase(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no fixtures in testdata")
	}
	for _, f := range files {
		if !slices.ContainsFunc(healthCases, func(tc healthCase) bool { return tc.file == filepath.Base(f) }) {
			t.Errorf("%s has no case in healthCases", f)
		}
	}
}

// The end-to-end suite converts typed objects rather than decoding JSON:
// integers then arrive as int64 and empty fields are left out, and the
// health must be the same.
func TestHealthOfConvertedTypedObjects(t *testing.T) {
	for _, tc := range healthCases {
		t.Run(tc.file, func(t *testing.T) {
			typed := decodeTyped(t, tc.file)
			content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
			if err != nil {
				t.Fatal(err)
			}
			expectHealth(t, &unstructured.Unstructured{Object: content}, tc.status, tc.message)
		})
	}
}

// The fixtures hold status as the controller writes it: fields of the API
// types only, the same reason and message on Ready and on Reconciling or
// Stalled (never both), the summary fields of an ExtendedDaemonSet taken
// from them, and conditions in the order the condition helpers keep.
func TestFixturesFollowTheConditionContract(t *testing.T) {
	for _, tc := range healthCases {
		t.Run(tc.file, func(t *testing.T) {
			typed := decodeTyped(t, tc.file)
			conds := typed.GetConditions()
			if len(conds) == 0 {
				return
			}
			ready := find(conds, v1alpha1.ReadyCondition)
			if ready == nil {
				t.Fatal("no Ready condition")
			}
			reconciling, stalled := find(conds, v1alpha1.ReconcilingCondition), find(conds, v1alpha1.StalledCondition)
			if reconciling != nil && stalled != nil {
				t.Error("Reconciling and Stalled together")
			}
			for _, c := range []*metav1.Condition{reconciling, stalled} {
				if c == nil {
					continue
				}
				if c.Status != metav1.ConditionTrue || ready.Status != metav1.ConditionFalse {
					t.Errorf("%s is %s with Ready %s, want True with Ready False", c.Type, c.Status, ready.Status)
				}
				if c.Reason != ready.Reason || c.Message != ready.Message {
					t.Errorf("%s says %s %q, Ready %s %q", c.Type, c.Reason, c.Message, ready.Reason, ready.Message)
				}
			}
			if eds, ok := typed.(*v1alpha1.ExtendedDaemonSet); ok && eds.Status.Reason != ready.Reason {
				t.Errorf("status.reason %q, Ready reason %q", eds.Status.Reason, ready.Reason)
			}
			if eds, ok := typed.(*v1alpha1.ExtendedDaemonSet); ok && eds.Status.Canary != nil {
				canary := find(conds, v1alpha1.CanaryCondition)
				if canary == nil || canary.Reason != ready.Reason || canary.Message != ready.Message {
					t.Errorf("Canary condition %v does not match Ready %v", canary, ready)
				}
			}

			// Setting the conditions one by one with the helpers the
			// controller uses sorts them its way.
			sorted := typed.DeepCopyObject().(conditions.Setter)
			sorted.SetConditions(nil)
			for i := range conds {
				conditions.Set(sorted, conds[i].DeepCopy())
			}
			if got, want := types(conds), types(sorted.GetConditions()); !slices.Equal(got, want) {
				t.Errorf("conditions in order %v, the controller writes %v", got, want)
			}
		})
	}
}

// expectHealth fails t unless Argo CD would show obj with wantStatus and
// wantMessage.
func expectHealth(t *testing.T, obj *unstructured.Unstructured, wantStatus, wantMessage string) {
	t.Helper()
	gotStatus, gotMessage, err := Health(obj)
	if err != nil {
		t.Fatalf("Health: %v", err)
	}
	if gotStatus != wantStatus || gotMessage != wantMessage {
		t.Errorf("Health = %s %q, want %s %q", gotStatus, gotMessage, wantStatus, wantMessage)
	}
}

func find(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

func types(conds []metav1.Condition) []string {
	out := make([]string, 0, len(conds))
	for _, c := range conds {
		out = append(out, c.Type)
	}
	return out
}

// readFixture decodes a fixture as Argo CD receives objects: JSON into an
// unstructured map.
func readFixture(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(j); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return obj
}

// decodeTyped decodes a fixture into its API type, refusing any field the
// type does not have.
func decodeTyped(t *testing.T, name string) conditionsObject {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var meta metav1.TypeMeta
	if err := yaml.Unmarshal(b, &meta); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var obj conditionsObject
	switch meta.Kind {
	case "ExtendedDaemonSet":
		obj = &v1alpha1.ExtendedDaemonSet{}
	case "ExtendedDaemonSetReplicaSet":
		obj = &v1alpha1.ExtendedDaemonSetReplicaSet{}
	default:
		t.Fatalf("%s: unexpected kind %q", name, meta.Kind)
	}
	if err := yaml.UnmarshalStrict(b, obj); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if gv := obj.GetObjectKind().GroupVersionKind().GroupVersion(); gv != v1alpha1.GroupVersion {
		t.Fatalf("%s: apiVersion %s", name, gv)
	}
	return obj
}

// conditionsObject is either kind, as the condition helpers see it.
type conditionsObject interface {
	conditions.Setter
	runtime.Object
}

// Argo CD may hand a script numbers in any of these forms; the health must
// not depend on which.
func TestHealthReadsNumbersOfAnyGoType(t *testing.T) {
	for name, pair := range map[string][2]any{
		"int64":       {int64(3), int64(2)},
		"float64":     {float64(3), float64(2)},
		"int":         {3, int32(2)},
		"json.Number": {json.Number("3"), json.Number("2")},
	} {
		t.Run(name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{
				"metadata": map[string]any{"generation": pair[0]},
				"status": map[string]any{
					"observedGeneration": pair[1],
					"conditions":         []any{map[string]any{"type": "Ready", "status": "True", "message": "24 pods available"}},
				},
			}}
			expectHealth(t, obj, Progressing, "waiting for the controller to observe generation 3")
		})
	}
}
