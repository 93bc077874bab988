package overrides

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// FuzzForNode reads resource overrides from node annotations and a setting
// the fuzzer draws: the annotation's key (whose ExtendedDaemonSet and
// container it names), its JSON value, and the setting's selector. ForNode
// must not panic; it reads exactly the annotations AnnotatedExtendedDaemonSets
// attributes to the ExtendedDaemonSet, errs exactly when one of them is no
// ResourceRequirements, and what it reads survives a JSON round trip;
// CheckNodeAnnotations agrees; Apply copies what it sets.
func FuzzForNode(f *testing.F) {
	f.Add("ns", "agent", "ns.agent.main", `{"requests":{"cpu":"1","memory":"1Gi"}}`, "pool", "In", "big")
	f.Add("ns", "agent", "ns.agent.main", `{"requests":`, "pool", "Exists", "")
	f.Add("ns", "agent", "ns.agent.with.dots.main", `{}`, "pool", "Sometimes", "x")
	f.Add("ns", "agent", "ns.agent.b.main", `not json`, "", "In", "")
	f.Add("ns", "agent.b", "ns.agent.b.main", `{"limits":{"cpu":"1e1000"}}`, "pool", "Gt", "1")
	f.Add("ns", "agent", "ns.agent.main", `{"limits":{"cpu":"-1"},"requests":{"nvidia.com/gpu":"0.5m"}}`, "pool", "NotIn", "a")
	f.Add("", "", "..", `{"claims":[{"name":""}]}`, "p", "DoesNotExist", "")
	f.Fuzz(func(t *testing.T, namespace, eds, key, value, labelKey, operator, labelValue string) {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:   "n1",
			Labels: map[string]string{"pool": "big"},
			Annotations: map[string]string{
				v1alpha1.NodeResourcesAnnotationPrefix + key:                        value,
				v1alpha1.NodeResourcesAnnotationPrefix + namespace + ".other.agent": `{"requests":{"cpu":"2"}}`,
			},
		}}
		setting := v1alpha1.ExtendedDaemonsetSetting{
			ObjectMeta: metav1.ObjectMeta{Name: "s"},
			Spec: v1alpha1.ExtendedDaemonsetSettingSpec{
				Reference: &autoscalingv1.CrossVersionObjectReference{Kind: "ExtendedDaemonSet", Name: eds},
				NodeSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: labelKey, Operator: metav1.LabelSelectorOperator(operator), Values: strings.Split(labelValue, ","),
				}}},
				Containers: []v1alpha1.ExtendedDaemonsetSettingContainerSpec{{Name: "main"}},
			},
		}
		settings := []v1alpha1.ExtendedDaemonsetSetting{setting}
		if errs := Validate(settings, []*corev1.Node{node}, nil); errs["s"] != nil {
			settings = nil
		}

		got, err := ForNode(namespace, eds, node, settings)
		checkErr := CheckNodeAnnotations(namespace, eds, []corev1.Node{*node})
		if (err == nil) != (checkErr == nil) {
			t.Fatalf("ForNode: %v, yet CheckNodeAnnotations: %v", err, checkErr)
		}
		// Namespaces are DNS labels, never empty and without a dot, and no
		// object has an empty name.
		if namespace == "" || eds == "" || strings.Contains(namespace, ".") || eds == "other" {
			return
		}
		ours := types.NamespacedName{Namespace: namespace, Name: eds}
		alone := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{v1alpha1.NodeResourcesAnnotationPrefix + key: value}}}
		attributed := slices.Contains(AnnotatedExtendedDaemonSets(alone), ours)
		valid := json.Unmarshal([]byte(value), &corev1.ResourceRequirements{}) == nil
		container, named := strings.CutPrefix(key, namespace+"."+eds+".")
		_, read := got[container]
		switch {
		case attributed && !valid && err == nil:
			t.Fatalf("annotation %s of %s is %q, yet ForNode reports nothing", key, ours, value)
		case attributed && valid && !read:
			t.Fatalf("annotation %s of %s is valid, yet ForNode does not read it", key, ours)
		case !attributed && err != nil:
			t.Fatalf("ForNode(%s) judges annotation %s, which AnnotatedExtendedDaemonSets gives another: %v", ours, key, err)
		case !attributed && named && read:
			t.Fatalf("ForNode(%s) reads annotation %s, which AnnotatedExtendedDaemonSets gives another", ours, key)
		case err != nil && (!strings.Contains(err.Error(), "node n1") || !strings.Contains(err.Error(), key)):
			t.Fatalf("the error names neither the node nor the annotation: %v", err)
		}
		for container, resources := range got {
			if resources.Requests.Cpu().String() == "2" && container == "agent" {
				t.Fatalf("ForNode(%s) read the annotation of %s/other", ours, namespace)
			}
			out, mErr := json.Marshal(resources)
			var back corev1.ResourceRequirements
			if mErr != nil || json.Unmarshal(out, &back) != nil || !equality.Semantic.DeepEqual(back, resources) {
				t.Fatalf("resources of %s do not survive JSON: %s (%v) read back as %+v", container, out, mErr, back)
			}
		}
		pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}, {Name: "untouched"}}}}
		Apply(pod, got)
		if !equality.Semantic.DeepEqual(pod.Spec.Containers[1].Resources, corev1.ResourceRequirements{}) {
			t.Fatalf("Apply set resources of a container it was not given")
		}
		if r, ok := got["main"]; ok && !equality.Semantic.DeepEqual(pod.Spec.Containers[0].Resources, r) {
			t.Fatalf("Apply set %+v, want %+v", pod.Spec.Containers[0].Resources, r)
		}
	})
}
