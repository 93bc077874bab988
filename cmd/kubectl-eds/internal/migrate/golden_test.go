package migrate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/onsi/gomega"
)

// updateGoldenEnv, set to 1, rewrites the golden files with what the
// tests got.
const updateGoldenEnv = "UPDATE_GOLDEN"

// expectGolden compares got with the file testdata/golden/name.
func expectGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if os.Getenv(updateGoldenEnv) == "1" {
		gomega.NewWithT(t).Expect(os.MkdirAll(filepath.Dir(path), 0o755)).To(gomega.Succeed())
		gomega.NewWithT(t).Expect(os.WriteFile(path, []byte(got), 0o600)).To(gomega.Succeed())
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s (%s=1 writes it): %v", path, updateGoldenEnv, err)
	}
	if string(want) != got {
		t.Errorf("%s differs from what the command printed (%s=1 rewrites it):\n--- want\n%s\n--- got\n%s", path, updateGoldenEnv, want, got)
	}
}
