package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

// typedClientResources are what the manager's role allows that it reaches
// through client-go's typed clients, with their own scheme, not through
// the manager's client and cache.
var typedClientResources = map[schema.GroupResource]string{
	{Group: "events.k8s.io", Resource: "events"}:                      "the event recorder",
	{Group: "authentication.k8s.io", Resource: "tokenreviews"}:        "the metrics endpoint's authentication",
	{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}: "the metrics endpoint's authorization",
}

// The manager's scheme knows the kind of every resource its role lets it
// reach through its client (a kind it lacks fails the manager's start or
// the first read), and no group its role does not name: the role, generated
// from the reconcilers' markers, is the list of what the manager uses.
func TestSchemeHoldsTheGroupsTheRoleAllows(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(data, &role); err != nil {
		t.Fatal(err)
	}
	scheme := newScheme()
	known := map[schema.GroupResource]bool{}
	groups := map[string]bool{}
	for gvk := range scheme.AllKnownTypes() {
		plural, _ := apimeta.UnsafeGuessKindToResource(gvk)
		known[plural.GroupResource()] = true
		groups[gvk.Group] = true
	}
	allowed := map[string]bool{}
	for _, rule := range role.Rules {
		for _, group := range rule.APIGroups {
			allowed[group] = true
			for _, resource := range rule.Resources {
				gr := schema.GroupResource{Group: group, Resource: resource}
				if strings.Contains(resource, "/") || typedClientResources[gr] != "" {
					continue
				}
				if !known[gr] {
					t.Errorf("the role allows %s, whose kind the manager's scheme does not know", gr)
				}
			}
		}
	}
	for group := range groups {
		if !allowed[group] {
			t.Errorf("the manager's scheme registers group %q, which its role does not name", group)
		}
	}
}
