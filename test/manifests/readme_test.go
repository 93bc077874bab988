package manifests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// conditionReasons are the values of the Reason* constants of
// api/v1alpha1/conditions.go, read from its source.
func conditionReasons(t *testing.T) []string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), repoPath("api/v1alpha1/conditions.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	ast.Inspect(file, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, name := range spec.Names {
			if !strings.HasPrefix(name.Name, "Reason") || i >= len(spec.Values) {
				continue
			}
			if lit, ok := spec.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				value, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				reasons = append(reasons, value)
			}
		}
		return true
	})
	return reasons
}

// The README's troubleshooting table is where a person lands with a reason
// in hand: every reason the controller writes has a row there.
func TestEveryConditionReasonIsTroubleshot(t *testing.T) {
	data, err := os.ReadFile(repoPath("README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	start := strings.Index(readme, "## Troubleshooting by condition reason")
	if start < 0 {
		t.Fatal("README.md has no section \"Troubleshooting by condition reason\"")
	}
	section := readme[start:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	reasons := conditionReasons(t)
	if len(reasons) < 20 {
		t.Fatalf("read %d reasons from conditions.go, want at least 20: did its layout change?", len(reasons))
	}
	for _, reason := range reasons {
		if !strings.Contains(section, "\n| `"+reason+"` |") {
			t.Errorf("reason %s has no row in README.md's troubleshooting table", reason)
		}
	}
}
