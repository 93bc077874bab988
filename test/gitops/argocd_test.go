package gitops

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// lastAppliedLimit is the most a client-side apply can store in the
// last-applied-configuration annotation (the API server's limit on all
// annotations of an object).
const lastAppliedLimit = 256 * 1024

func TestArgoCDApplications(t *testing.T) {
	repo := fluxSource(t, render(t, "kustomize/flux"))
	wantURL := str(t, repo, "spec", "url")
	wantRevision := str(t, repo, "spec", "ref", "branch")

	byPath := map[string]*unstructured.Unstructured{}
	for _, app := range ofKind(render(t, "kustomize/argocd/applications"), "Application") {
		name := app.GetName()
		if app.GetAPIVersion() != "argoproj.io/v1alpha1" {
			t.Errorf("Application %s: apiVersion %s, want argoproj.io/v1alpha1", name, app.GetAPIVersion())
		}
		if app.GetNamespace() != "argocd" {
			t.Errorf("Application %s is in namespace %q; Argo CD only reads Applications in its own, argocd", name, app.GetNamespace())
		}
		// A fork edits one URL in two places; the test keeps them together.
		if got := str(t, app, "spec", "source", "repoURL"); got != wantURL {
			t.Errorf("Application %s reads %s, the Flux GitRepository %s", name, got, wantURL)
		}
		if got := str(t, app, "spec", "source", "targetRevision"); got != wantRevision {
			t.Errorf("Application %s follows %s, the Flux GitRepository %s", name, got, wantRevision)
		}
		kustomize, _, _ := unstructured.NestedMap(app.Object, "spec", "source", "kustomize")
		for field := range kustomize {
			if field != "patches" {
				t.Errorf("Application %s sets spec.source.kustomize.%s, which this test does not render as Argo CD would", name, field)
			}
		}
		path := repoDir(t, str(t, app, "spec", "source", "path"))
		byPath[path] = app
		patches, _, _ := unstructured.NestedSlice(app.Object, "spec", "source", "kustomize", "patches")
		rendered, err := build(repoPath(path), patches)
		if err != nil {
			t.Errorf("Application %s: kustomize build %s: %v", name, path, err)
			continue
		}
		checkArgoCDRender(t, app, rendered)
	}

	for _, path := range append(overlayDirs(t), "config/default") {
		if byPath[path] == nil {
			t.Errorf("no Argo CD Application syncs %s", path)
		}
	}
	// Argo CD has no dependency between Applications: staging syncs by
	// itself, production only when a pipeline or a person promotes a
	// revision staging is Healthy on.
	if app := byPath["kustomize/overlays/staging"]; app != nil && !autoSyncs(app) {
		t.Errorf("Application %s does not sync automatically", app.GetName())
	}
	if app := byPath["kustomize/overlays/production"]; app != nil && autoSyncs(app) {
		t.Errorf("Application %s syncs automatically: a commit would reach production while staging still judges it", app.GetName())
	}
}

func checkArgoCDRender(t *testing.T, app *unstructured.Unstructured, rendered []*unstructured.Unstructured) {
	t.Helper()
	name := app.GetName()
	destination := str(t, app, "spec", "destination", "namespace")
	options, _, _ := unstructured.NestedStringSlice(app.Object, "spec", "syncPolicy", "syncOptions")
	for _, obj := range rendered {
		if ns := obj.GetNamespace(); ns != "" && ns != destination {
			t.Errorf("Application %s deploys to %s, but %s %s goes to %s", name, destination, obj.GetKind(), obj.GetName(), ns)
		}
		raw, err := json.Marshal(obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) > lastAppliedLimit && !slices.Contains(options, "ServerSideApply=true") {
			t.Errorf("Application %s applies client-side, but %s %s (%d bytes) does not fit the last-applied annotation",
				name, obj.GetKind(), obj.GetName(), len(raw))
		}
		if obj.GetKind() != "CustomResourceDefinition" {
			continue
		}
		// Neither a prune nor deleting the Application may delete a CRD,
		// and with it every ExtendedDaemonSet of the cluster.
		syncOptions := strings.Split(obj.GetAnnotations()["argocd.argoproj.io/sync-options"], ",")
		for _, want := range []string{"Prune=false", "Delete=false"} {
			if !slices.Contains(syncOptions, want) {
				t.Errorf("Application %s: CRD %s lacks the sync option %s", name, obj.GetName(), want)
			}
		}
	}
}

func autoSyncs(app *unstructured.Unstructured) bool {
	_, found, _ := unstructured.NestedMap(app.Object, "spec", "syncPolicy", "automated")
	return found
}
