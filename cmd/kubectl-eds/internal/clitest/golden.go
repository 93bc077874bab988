package clitest

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/onsi/gomega"
)

// UpdateGoldenEnv, set to 1, makes Golden write what the tests got into
// the golden files instead of comparing with them.
const UpdateGoldenEnv = "UPDATE_GOLDEN"

// Golden compares got with the file at path (relative to the test's
// package), or writes got there when UPDATE_GOLDEN=1.
func Golden(t testing.TB, path, got string) {
	t.Helper()
	if os.Getenv(UpdateGoldenEnv) == "1" {
		gomega.NewWithT(t).Expect(os.MkdirAll(filepath.Dir(path), 0o755)).To(gomega.Succeed())
		gomega.NewWithT(t).Expect(os.WriteFile(path, []byte(got), 0o644)).To(gomega.Succeed())
		return
	}
	want, err := os.ReadFile(path)
	gomega.NewWithT(t).Expect(err).NotTo(gomega.HaveOccurred(), "golden file missing: run with %s=1 to write it", UpdateGoldenEnv)
	if got != string(want) {
		t.Errorf("output differs from %s (run with %s=1 to accept it)\n--- want\n%s--- got\n%s", path, UpdateGoldenEnv, want, got)
	}
}

// columnGap is what separates the columns of kubectl's tables: at least
// the tab writer's padding of three spaces, where a cell holds at most
// single spaces.
var columnGap = regexp.MustCompile(` {2,}`)

// Retabulate aligns again the columns of text, which the tab writer of
// kubectl's printers aligned, once names in it were replaced by ones of
// another length: a column is what two spaces or more separate. Lines
// keep their indentation.
func Retabulate(text string) string {
	var b bytes.Buffer
	// kubectl's table writer remembers widths from one block of columns
	// to the next; this one aligns each block on its own, as text/tabwriter
	// does, which a table of one block does not tell apart.
	w := tabwriter.NewWriter(&b, 6, 4, 3, ' ', 0)
	for line := range strings.Lines(text) {
		line = strings.TrimSuffix(line, "\n")
		body := strings.TrimLeft(line, " ")
		indent := line[:len(line)-len(body)]
		_, _ = w.Write([]byte(indent + columnGap.ReplaceAllString(strings.TrimRight(body, " "), "\t") + "\n"))
	}
	_ = w.Flush()
	return b.String()
}

// Age is what kubectl writes for an age or a duration: 5s, 3m2s, 10m, 2d.
var Age = regexp.MustCompile(`\b[0-9]+[smhdy]([0-9]+[smh])?\b`)

// NormalizeAges writes every age in text as <age>.
func NormalizeAges(text string) string { return Age.ReplaceAllString(text, "<age>") }
