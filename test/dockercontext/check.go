package main

import (
	"fmt"
	"go/version"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// buildContext is a build context as Docker sends it: the directory less what
// the ignore file excludes.
type buildContext struct {
	dir        string
	ignore     dockerignore
	ignoreFile string
}

// check returns what keeps the builder stage from building m's package:
// each a line saying what is wrong, then indented lines saying what to
// change. modRel is the module root relative to the context root.
func check(ctx buildContext, b *builder, m *module, modRel string) []string {
	var problems []string
	problems = append(problems, checkGoImage(b, m.goVersion)...)
	problems = append(problems, checkSources(ctx, b)...)

	// go build runs in WORKDIR, and finds the module there: each file must
	// land at its place below it.
	root := b.workdir
	missing := map[string][]string{}          // top-level entry of the module -> files not copied
	excluded := map[*ignorePattern][]string{} // pattern -> files it leaves out
	for _, f := range m.files {
		cf := path.Join(modRel, f)
		if p := ctx.ignore.excludedBy(cf); p != nil {
			excluded[p] = append(excluded[p], cf)
			continue
		}
		if !copied(b.copies, cf, path.Join(root, f)) {
			top, _, _ := strings.Cut(f, "/")
			missing[top] = append(missing[top], f)
		}
	}
	for _, p := range sortedKeys(excluded, func(p *ignorePattern) int { return p.line }) {
		files := excluded[p]
		problems = append(problems, fmt.Sprintf("%s line %d %q leaves out of the build context %s, which go build reads\n  remove that line, or add after it: %s",
			ctx.ignoreFile, p.line, p.text, someOf(files), strings.Join(exceptions(files), " ")))
	}
	for _, top := range sortedKeys(missing, func(s string) string { return s }) {
		files := missing[top]
		src, to := path.Join(modRel, top), path.Join(root, top)
		if files[0] == top { // a file at the module root
			problems = append(problems, fmt.Sprintf("%s is not copied to %s, where go build reads it\n  add before line %d: COPY %s ./", top, to, b.build.line, src))
			continue
		}
		problems = append(problems, fmt.Sprintf("%s/ is not copied to %s/, where go build reads %s (%s): %s\n  add before line %d: COPY %s/ %s/",
			top, to, count(len(files), "file"), packagesOf(m, files), someOf(files), b.build.line, src, top))
	}
	return problems
}

// copied reports whether a COPY brings the context file f to want.
func copied(copies []copyInst, f, want string) bool {
	for _, c := range copies {
		if to, ok := c.lands(f); ok && to == want {
			return true
		}
	}
	return false
}

// checkSources refuses COPY sources that are not in the context: Docker
// fails the build on them.
func checkSources(ctx buildContext, b *builder) []string {
	var problems []string
	for _, c := range b.copies {
		for _, s := range c.sources {
			matches := []string{s}
			if hasMeta(s) {
				var err error
				if matches, err = fs.Glob(os.DirFS(ctx.dir), s); err != nil {
					problems = append(problems, fmt.Sprintf("line %d: COPY source %s: %v", c.line, s, err))
					continue
				}
			} else if _, err := os.Stat(path.Join(ctx.dir, s)); err != nil {
				matches = nil
			}
			sent, why := false, ""
			for _, f := range matches {
				if p := ctx.ignore.excludedBy(f); p != nil && s != "." {
					why = fmt.Sprintf(" (%s line %d %q excludes it)", ctx.ignoreFile, p.line, p.text)
					continue
				}
				sent = true
				break
			}
			if !sent {
				problems = append(problems, fmt.Sprintf("line %d: COPY source %s is not in the build context%s", c.line, s, why))
			}
		}
	}
	return problems
}

// checkGoImage requires a golang builder image to be go.mod's Go version,
// or its minor release line: the image sets GOTOOLCHAIN=local, so an older
// go refuses the module instead of fetching the toolchain.
func checkGoImage(b *builder, want string) []string {
	ref, _, _ := strings.Cut(b.image, "@")
	repo, tag := ref, ""
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		repo, tag = ref[:i], ref[i+1:]
	}
	switch strings.TrimPrefix(strings.TrimPrefix(repo, "docker.io/"), "library/") {
	case "golang":
	default:
		return nil
	}
	tag, _, _ = strings.Cut(tag, "-") // 1.27.0-bookworm
	if tag == want || tag == strings.TrimPrefix(version.Lang("go"+want), "go") {
		return nil
	}
	return []string{fmt.Sprintf("line %d: the builder image %s is not go.mod's Go %s, and its go refuses an older one (GOTOOLCHAIN=local)\n  use golang:%s", b.from.line, b.image, want, want)}
}

// exceptions are the .dockerignore lines that bring files back: one per
// file for a few, else one per top-level directory (or file) they are in.
func exceptions(files []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		top := f
		if len(files) > shown {
			top, _, _ = strings.Cut(f, "/")
		}
		if !seen[top] {
			seen[top] = true
			out = append(out, "!"+top)
		}
	}
	return out
}

func packagesOf(m *module, files []string) string {
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		if p := m.pkgOf[f]; p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	if len(out) == 1 {
		return "package " + out[0]
	}
	return "packages " + strings.Join(out, ", ")
}

// shown is how many files a message names.
const shown = 3

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// someOf names the first files of a list, and how many more there are.
func someOf(files []string) string {
	if len(files) <= shown {
		return strings.Join(files, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(files[:shown], ", "), len(files)-shown)
}

func sortedKeys[K comparable, V any, O int | string](m map[K]V, order func(K) O) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return order(keys[i]) < order(keys[j]) })
	return keys
}
