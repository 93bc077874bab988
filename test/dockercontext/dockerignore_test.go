package main

import (
	"strings"
	"testing"
)

func TestDockerignore(t *testing.T) {
	ignore, err := parseDockerignore([]byte(strings.Join([]string{
		"# a comment",
		"  bin/  ", // trimmed and cleaned: bin
		"/config",  // relative to the context root
		"**/*.tmp", // at any depth
		"docs/*.md",
		"!docs/keep.md",
		"vendor/**",
		"test",
		"!test/fixtures/**/*.go",
		`a\*b`,
	}, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		line int // the deciding pattern's line, 0 when sent
	}{
		{"bin", 2},
		{"bin/manager", 2}, // a pattern excludes what is below a directory it matches
		{"cmd/bin/x", 0},   // patterns are anchored at the context root
		{"config/default/kustomization.yaml", 3},
		{"x.tmp", 4},
		{"a/b/c.tmp", 4},
		{"a/b/c.tmpx", 0},
		{"docs/intro.md", 5},
		{"docs/sub/intro.md", 0}, // * stops at a slash
		{"docs/keep.md", 0},
		{"vendor", 0}, // vendor/** needs something below vendor
		{"vendor/a/b.go", 7},
		{"test/e2e/x.go", 8},
		{"test/fixtures/a/b/c.go", 0},
		{"test/fixtures/c.go", 0}, // **/ matches no directory too
		{"test/fixtures/c.yaml", 8},
		{"a*b", 10},
		{"axb", 0},
	} {
		got := 0
		if p := ignore.excludedBy(tc.path); p != nil {
			got = p.line
		}
		if got != tc.line {
			t.Errorf("%s: excluded by line %d, want %d", tc.path, got, tc.line)
		}
	}
}

func TestDockerignoreRefusesBadPatterns(t *testing.T) {
	for _, text := range []string{"!", "a[", "ok\n[z-"} {
		if _, err := parseDockerignore([]byte(text)); err == nil || !strings.Contains(err.Error(), ".dockerignore line") {
			t.Errorf("%q: got %v, want an error naming the line", text, err)
		}
	}
}
