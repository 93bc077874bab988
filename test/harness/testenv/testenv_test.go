package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/discovery"
)

func TestStartEnvtestServesDiscovery(t *testing.T) {
	RequireAssets(t)
	env, cfg, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	client, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := client.ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, g := range groups.Groups {
		names[g.Name] = true
	}
	if !names["apps"] || !names["apiextensions.k8s.io"] {
		t.Fatalf("API groups %v lack apps or apiextensions.k8s.io", names)
	}
}

func TestAssetsDirExplainsHowToGetTheBinaries(t *testing.T) {
	for name, value := range map[string]string{"unset": "", "empty directory": t.TempDir()} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(AssetsEnv, value)
			_, err := AssetsDir()
			if err == nil || !strings.Contains(err.Error(), "make testbin") {
				t.Fatalf("AssetsDir with %s=%q: got error %v, want one naming make testbin", AssetsEnv, value, err)
			}
		})
	}
}

func TestRepoRootHoldsTheProductModule(t *testing.T) {
	root := RepoRoot()
	if _, err := os.Stat(filepath.Join(root, "config", "crd")); err != nil {
		t.Fatalf("RepoRoot %s: %v", root, err)
	}
	if !isProductModule(filepath.Join(root, "go.mod")) {
		t.Fatalf("RepoRoot %s: go.mod is not module %s", root, modulePath)
	}
}
