package steer

import (
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// diffContext is how many unchanged lines surround a change, as diff -u.
const diffContext = 3

// unifiedDiff is the unified diff of the lines of a and b, labelled from
// and to, empty when they are equal.
func unifiedDiff(from, to, a, b string) string {
	diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: lines(a), B: lines(b), FromFile: from, ToFile: to, Context: diffContext,
	})
	if err != nil {
		// It writes to a strings.Builder, which never fails.
		return ""
	}
	return diff
}

// lines splits s after each newline; difflib's SplitLines would add an
// empty last line to a text that ends with one.
func lines(s string) []string {
	out := strings.SplitAfter(s, "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}
