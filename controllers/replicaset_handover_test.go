package controllers

import (
	"testing"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The pods without a controller taken for a workload's are those its
// selector matches when it names a label value, and otherwise only those
// that also carry its template labels: never every pod of the namespace.
func TestOrphanSelector(t *testing.T) {
	agent := labels.Set{"app": "agent", "tier": "node"}
	database := labels.Set{"app": "database"}
	unlabelled := labels.Set{}
	template := map[string]string{"app": "agent"}
	for _, tc := range []struct {
		name     string
		selector *metav1.LabelSelector
		template map[string]string
		// matches are the pods selected, among agent, database, unlabelled;
		// nil with refused.
		matches []labels.Set
		refused bool
	}{
		{name: "unset means the template labels", selector: nil, template: template, matches: []labels.Set{agent}},
		{name: "empty means the template labels", selector: &metav1.LabelSelector{}, template: template, matches: []labels.Set{agent}},
		{name: "matchLabels", selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "node"}}, template: template,
			matches: []labels.Set{agent}},
		{name: "In names values", template: template, matches: []labels.Set{agent, database},
			selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"agent", "database"}},
			}}},
		{name: "Exists names no value", template: template, matches: []labels.Set{agent},
			selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "app", Operator: metav1.LabelSelectorOpExists},
			}}},
		{name: "negative requirements name no value", template: template, matches: []labels.Set{agent},
			selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"database"}},
			}}},
		{name: "nothing to tell pods apart", selector: &metav1.LabelSelector{}, template: nil, refused: true},
		{name: "negative requirements only, no template labels", template: map[string]string{}, refused: true,
			selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"database"}},
			}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			selector, err := orphanSelector(tc.selector, tc.template)
			if tc.refused {
				g.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("any pod of the namespace")))
				return
			}
			g.Expect(err).NotTo(gomega.HaveOccurred())
			var matched []labels.Set
			for _, pod := range []labels.Set{agent, database, unlabelled} {
				if selector.Matches(pod) {
					matched = append(matched, pod)
				}
			}
			g.Expect(matched).To(gomega.Equal(tc.matches))
		})
	}
}
