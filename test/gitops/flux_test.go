package gitops

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// fluxKustomization is a Flux Kustomization with what its path renders.
type fluxKustomization struct {
	obj      *unstructured.Unstructured
	path     string
	rendered []*unstructured.Unstructured
}

// Spec fields with which Flux would render something other than what
// build renders here.
var fluxUnmodelled = []string{
	"images", "namePrefix", "nameSuffix", "targetNamespace", "components",
	"postBuild", "commonMetadata", "patchesStrategicMerge", "patchesJson6902",
}

func TestFluxKustomizations(t *testing.T) {
	objs := render(t, "kustomize/flux")
	repo := fluxSource(t, objs)
	allowed := unignoredDirs(t, repo)

	byName := map[string]*fluxKustomization{}
	byPath := map[string]*fluxKustomization{}
	for _, obj := range ofKind(objs, "Kustomization") {
		name := obj.GetName()
		if obj.GetAPIVersion() != "kustomize.toolkit.fluxcd.io/v1" {
			t.Errorf("Kustomization %s: apiVersion %s, want kustomize.toolkit.fluxcd.io/v1", name, obj.GetAPIVersion())
		}
		if obj.GetNamespace() != repo.GetNamespace() {
			t.Errorf("Kustomization %s is in namespace %q, its GitRepository in %q", name, obj.GetNamespace(), repo.GetNamespace())
		}
		if kind, src := str(t, obj, "spec", "sourceRef", "kind"), str(t, obj, "spec", "sourceRef", "name"); kind != "GitRepository" || src != repo.GetName() {
			t.Errorf("Kustomization %s reads %s %s, want GitRepository %s", name, kind, src, repo.GetName())
		}
		for _, field := range fluxUnmodelled {
			if _, found := obj.Object["spec"].(map[string]any)[field]; found {
				t.Errorf("Kustomization %s sets spec.%s, which this test does not render as Flux would", name, field)
			}
		}
		k := &fluxKustomization{obj: obj, path: repoDir(t, str(t, obj, "spec", "path"))}
		if top := strings.Split(k.path, "/")[0]; allowed != nil && !allowed[top] {
			t.Errorf("Kustomization %s builds %s, which the GitRepository's ignore rules leave out of the artifact", name, k.path)
		}
		patches, _, _ := unstructured.NestedSlice(obj.Object, "spec", "patches")
		rendered, err := build(repoPath(k.path), patches)
		if err != nil {
			t.Errorf("Kustomization %s: kustomize build %s: %v", name, k.path, err)
		}
		k.rendered = rendered
		for _, flag := range []string{"wait", "prune"} {
			if v, _, _ := unstructured.NestedBool(obj.Object, "spec", flag); !v {
				t.Errorf("Kustomization %s: spec.%s is not true", name, flag)
			}
		}
		checkFluxTimeout(t, k)
		byName[name] = k
		byPath[k.path] = k
	}

	// One Kustomization per overlay, and the CRDs and controller they need.
	for _, path := range append(overlayDirs(t), "config/default") {
		if byPath[path] == nil {
			t.Errorf("no Flux Kustomization builds %s", path)
		}
	}
	checkFluxDependencies(t, byName)
	if staging, production := byPath["kustomize/overlays/staging"], byPath["kustomize/overlays/production"]; staging != nil && production != nil &&
		!slices.Contains(dependsOn(production.obj), staging.obj.GetName()) {
		t.Errorf("Kustomization %s does not depend on %s: a version would reach production before staging rolled it out",
			production.obj.GetName(), staging.obj.GetName())
	}
	// Removing the Kustomization must not delete the CRDs, and with them
	// every ExtendedDaemonSet of the cluster.
	for _, k := range byName {
		for _, crd := range ofKind(k.rendered, "CustomResourceDefinition") {
			if got := crd.GetAnnotations()["kustomize.toolkit.fluxcd.io/prune"]; got != "disabled" {
				t.Errorf("Kustomization %s would prune CRD %s (prune annotation %q)", k.obj.GetName(), crd.GetName(), got)
			}
		}
	}
}

func fluxSource(t *testing.T, objs []*unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	repos := ofKind(objs, "GitRepository")
	if len(repos) != 1 {
		t.Fatalf("kustomize/flux renders %d GitRepositories, want 1", len(repos))
	}
	repo := repos[0]
	if repo.GetAPIVersion() != "source.toolkit.fluxcd.io/v1" {
		t.Errorf("GitRepository apiVersion %s, want source.toolkit.fluxcd.io/v1", repo.GetAPIVersion())
	}
	return repo
}

// unignoredDirs returns the top-level directories a GitRepository's ignore
// rules put back after ignoring everything ("/*" then "!/dir/"), or nil when
// they do not ignore everything.
func unignoredDirs(t *testing.T, repo *unstructured.Unstructured) map[string]bool {
	t.Helper()
	ignore, _, _ := unstructured.NestedString(repo.Object, "spec", "ignore")
	lines := strings.Fields(ignore)
	if !slices.Contains(lines, "/*") {
		return nil
	}
	dirs := map[string]bool{}
	for _, line := range lines {
		if dir, ok := strings.CutPrefix(line, "!/"); ok {
			dirs[strings.Trim(dir, "/")] = true
		}
	}
	return dirs
}

// checkFluxTimeout: Flux fails a health check that outlasts spec.timeout.
// A healthy canary must fit in it (its duration, or the first analysis
// measurement if that comes later), and so must a stuck one up to
// autoFail.canaryTimeout, so that the sync ends with the controller's
// CanaryFailed verdict, which Flux reports at once, and not a bare timeout.
func checkFluxTimeout(t *testing.T, k *fluxKustomization) {
	t.Helper()
	raw := str(t, k.obj, "spec", "timeout")
	timeout, err := time.ParseDuration(raw)
	if err != nil {
		t.Errorf("Kustomization %s: spec.timeout %q: %v", k.obj.GetName(), raw, err)
		return
	}
	for _, eds := range extendedDaemonSets(t, k.rendered) {
		if c := eds.Spec.Strategy.Canary; c != nil && timeout <= canaryBound(c) {
			t.Errorf("Kustomization %s: timeout %s is not longer than ExtendedDaemonSet %s's canary can last (%s)",
				k.obj.GetName(), timeout, eds.Name, canaryBound(c))
		}
	}
}

// canaryBound is the longest a canary takes to promote or fail on its own.
func canaryBound(c *v1alpha1.CanaryStrategy) time.Duration {
	bound := canaryDuration(c)
	if a := c.Analysis; a != nil && a.InitialDelay != nil {
		bound = max(bound, a.InitialDelay.Duration+analysisInterval(a))
	}
	if autoFails(c) && c.AutoFail.CanaryTimeout != nil {
		bound = max(bound, c.AutoFail.CanaryTimeout.Duration)
	}
	return bound
}

// checkFluxDependencies: every dependency exists, there is no cycle, and a
// Kustomization applying ExtendedDaemonSets waits for the one applying their
// CRD, which Flux cannot apply them before.
func checkFluxDependencies(t *testing.T, byName map[string]*fluxKustomization) {
	t.Helper()
	var crdOwner string
	for name, k := range byName {
		for _, crd := range ofKind(k.rendered, "CustomResourceDefinition") {
			if crd.GetName() == "extendeddaemonsets.extendeddaemonset.io" {
				crdOwner = name
			}
		}
	}
	if crdOwner == "" {
		t.Fatal("no Flux Kustomization applies the ExtendedDaemonSet CRD")
	}
	for name, k := range byName {
		for _, dep := range dependsOn(k.obj) {
			if byName[dep] == nil {
				t.Errorf("Kustomization %s depends on %s, which does not exist", name, dep)
			}
		}
		if len(ofKind(k.rendered, "ExtendedDaemonSet")) > 0 && !slices.Contains(dependsOn(k.obj), crdOwner) {
			t.Errorf("Kustomization %s applies ExtendedDaemonSets without depending on %s, which applies their CRD", name, crdOwner)
		}
		if cycle := findCycle(byName, name, nil); cycle != nil {
			t.Errorf("dependency cycle: %s", strings.Join(cycle, " -> "))
		}
	}
}

// findCycle follows dependsOn from name and returns the first path back to a
// Kustomization already on it.
func findCycle(byName map[string]*fluxKustomization, name string, path []string) []string {
	if i := slices.Index(path, name); i >= 0 {
		return append(path[i:], name)
	}
	k := byName[name]
	if k == nil {
		return nil
	}
	for _, dep := range dependsOn(k.obj) {
		if cycle := findCycle(byName, dep, append(slices.Clone(path), name)); cycle != nil {
			return cycle
		}
	}
	return nil
}

func dependsOn(obj *unstructured.Unstructured) []string {
	deps, _, _ := unstructured.NestedSlice(obj.Object, "spec", "dependsOn")
	var names []string
	for _, dep := range deps {
		if m, ok := dep.(map[string]any); ok {
			name, _ := m["name"].(string)
			names = append(names, name)
		}
	}
	return names
}

// repoDir cleans a path that a GitOps tool resolves from the repository root
// and checks that it is a kustomization there.
func repoDir(t *testing.T, path string) string {
	t.Helper()
	rel := filepath.ToSlash(filepath.Clean(strings.TrimPrefix(path, "/")))
	if rel == "." || strings.HasPrefix(rel, "..") {
		t.Errorf("path %q is not a directory inside the repository", path)
		return rel
	}
	if _, err := os.Stat(repoPath(filepath.Join(rel, "kustomization.yaml"))); err != nil {
		t.Errorf("path %q has no kustomization.yaml: %v", path, err)
	}
	return rel
}

// overlayDirs lists the overlays users pick from.
func overlayDirs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(repoPath("kustomize/overlays/*/kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("found %d overlays under kustomize/overlays, want staging and production", len(files))
	}
	var dirs []string
	for _, f := range files {
		dirs = append(dirs, "kustomize/overlays/"+filepath.Base(filepath.Dir(f)))
	}
	return dirs
}
