package manifests

import (
	"fmt"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// managerGrants is everything the controllers do with the API, cluster-wide:
// reads through the cache (list, watch), the few reads around it (get),
// and writes of pods, replica sets, statuses and events. A grant added here
// must be a call added in the code.
var managerGrants = map[string][]string{
	// Cache only.
	"/nodes": {"list", "watch"},
	// Cache, plus the API reader's list of a migrated DaemonSet's pods;
	// pods are created and deleted, and patched only by an in-place update
	// (images, labels, owner) and its readiness gate (status).
	"/pods":        {"create", "delete", "list", "patch", "watch"},
	"/pods/status": {"patch"},
	// One named Secret per analysis, read around the cache.
	"/secrets": {"get"},
	// The DaemonSet an ExtendedDaemonSet migrates from, read around the
	// cache; those a workloadRef names, watched.
	"apps/daemonsets": {"get", "list", "watch"},
	// The revisions of a DaemonSet a workloadRef names, listed around the cache.
	"apps/controllerrevisions": {"list"},
	// The controllers' recorder writes events.k8s.io events only.
	"events.k8s.io/events": {"create", "patch"},
	// The metrics endpoint authenticates and authorizes its callers.
	"authentication.k8s.io/tokenreviews":        {"create"},
	"authorization.k8s.io/subjectaccessreviews": {"create"},
	// Read through the cache and, while a canary may run, around it.
	"extendeddaemonset.io/extendeddaemonsets": {"get", "list", "watch"},
	// Replica sets are created and pruned, never changed (their status is),
	// and the active one is read around the cache when the cache lacks it.
	"extendeddaemonset.io/extendeddaemonsetreplicasets": {"create", "delete", "get", "list", "watch"},
	"extendeddaemonset.io/extendeddaemonsetsettings":    {"list", "watch"},
	// Statuses are merge-patched.
	"extendeddaemonset.io/extendeddaemonsets/status":           {"patch"},
	"extendeddaemonset.io/extendeddaemonsetreplicasets/status": {"patch"},
	"extendeddaemonset.io/extendeddaemonsetsettings/status":    {"patch"},
	// Owner references with blockOwnerDeletion, on replica sets and on pods.
	"extendeddaemonset.io/extendeddaemonsets/finalizers":           {"update"},
	"extendeddaemonset.io/extendeddaemonsetreplicasets/finalizers": {"update"},
}

// leaderElectionGrants is what controller-runtime's leader election does in
// the manager's namespace: a lease read, created and renewed, and the
// events telling who leads.
var leaderElectionGrants = map[string][]string{
	"coordination.k8s.io/leases": {"create", "get", "update"},
	"/events":                    {"create", "patch"},
}

func TestRBACGrantsExactlyWhatTheControllersUse(t *testing.T) {
	objs := render(t, repoPath("config/default"))
	role := findObject(t, objs, "ClusterRole", "eds-manager-role")
	for _, d := range diffGrants(grants(t, role), managerGrants) {
		t.Errorf("manager ClusterRole: %s", d)
	}
	election := findObject(t, objs, "Role", "eds-leader-election-role")
	for _, d := range diffGrants(grants(t, election), leaderElectionGrants) {
		t.Errorf("leader election Role: %s", d)
	}
	if election.GetNamespace() != "extendeddaemonset-system" {
		t.Errorf("leader election Role is in namespace %q, not the manager's", election.GetNamespace())
	}
}

func findObject(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	i := slices.IndexFunc(objs, func(o *unstructured.Unstructured) bool { return o.GetKind() == kind && o.GetName() == name })
	if i < 0 {
		t.Fatalf("no %s %s rendered", kind, name)
	}
	return objs[i]
}

// grants flattens a role's rules to "group/resource" -> sorted verbs, so
// that rules split or merged differently compare equal while any verb,
// resource or group added shows. A rule narrowed to resource names or
// granting non-resource URLs is not expected and fails the test.
func grants(t *testing.T, obj *unstructured.Unstructured) map[string][]string {
	t.Helper()
	var role rbacv1.ClusterRole // a Role's rules read the same
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &role); err != nil {
		t.Fatalf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
	}
	out := map[string][]string{}
	for _, rule := range role.Rules {
		if len(rule.ResourceNames) > 0 || len(rule.NonResourceURLs) > 0 {
			t.Errorf("%s %s: unexpected rule %v", obj.GetKind(), obj.GetName(), rule)
		}
		for _, group := range rule.APIGroups {
			for _, resource := range rule.Resources {
				key := group + "/" + resource
				out[key] = append(out[key], rule.Verbs...)
			}
		}
	}
	for key, verbs := range out {
		slices.Sort(verbs)
		out[key] = slices.Compact(verbs)
	}
	return out
}

// diffGrants lists the verbs granted beyond want and those missing from it.
func diffGrants(got, want map[string][]string) []string {
	var out []string
	for key, verbs := range got {
		for _, v := range verbs {
			if !slices.Contains(want[key], v) {
				out = append(out, fmt.Sprintf("grants %s %s, which the controllers do not use", v, key))
			}
		}
	}
	for key, verbs := range want {
		for _, v := range verbs {
			if !slices.Contains(got[key], v) {
				out = append(out, fmt.Sprintf("lacks %s %s", v, key))
			}
		}
	}
	slices.Sort(out)
	return out
}
