package manifests

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

func TestSamplesApply(t *testing.T) {
	testenv.RequireAssets(t)
	files, err := filepath.Glob(repoPath("config/samples/*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	applied := 0
	for _, file := range files {
		if filepath.Base(file) == "kustomization.yaml" {
			continue
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			doc, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := create(context.Background(), t, fromYAML(t, string(doc))); err != nil {
				t.Fatalf("sample %s was refused: %v", file, err)
			}
		})
		applied++
	}
	if applied < 3 {
		t.Fatalf("want at least 3 samples (rolling update, canary, setting), found %d", applied)
	}
}
