package main

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"text/scanner"
)

// ignorePattern is one line of a .dockerignore.
type ignorePattern struct {
	line      int
	text      string // as written
	exception bool   // a "!" line: brings matching paths back
	re        *regexp.Regexp
}

// dockerignore holds the patterns of a .dockerignore in their order.
type dockerignore []ignorePattern

// parseDockerignore reads patterns as Docker does (moby/patternmatcher's
// ignorefile and patternmatcher): "#" lines are comments, each pattern is
// trimmed, cleaned and made relative to the context root, and a leading
// "!" makes it an exception.
func parseDockerignore(data []byte) (dockerignore, error) {
	var out dockerignore
	sc := bufio.NewScanner(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))))
	for n := 1; sc.Scan(); n++ {
		raw := sc.Text()
		if strings.HasPrefix(raw, "#") {
			continue
		}
		p := ignorePattern{line: n, text: strings.TrimSpace(raw)}
		pattern := p.text
		if pattern == "" {
			continue
		}
		if pattern[0] == '!' {
			p.exception = true
			pattern = strings.TrimSpace(pattern[1:])
			if pattern == "" {
				return nil, fmt.Errorf(".dockerignore line %d: %q excepts nothing", n, raw)
			}
		}
		pattern = strings.TrimPrefix(filepath.ToSlash(filepath.Clean(pattern)), "/")
		if pattern == "" {
			pattern = "."
		}
		if _, err := path.Match(pattern, "."); err != nil {
			return nil, fmt.Errorf(".dockerignore line %d: %q: %w", n, raw, err)
		}
		re, err := compilePattern(pattern)
		if err != nil {
			return nil, fmt.Errorf(".dockerignore line %d: %q: %w", n, raw, err)
		}
		p.re = re
		out = append(out, p)
	}
	return out, sc.Err()
}

// compilePattern translates a pattern into the regular expression
// patternmatcher uses: "*" and "?" stop at a slash, "**" crosses them
// ("**/" matches any number of directories, none included), "\" escapes.
func compilePattern(pattern string) (*regexp.Regexp, error) {
	var sc scanner.Scanner
	sc.Init(strings.NewReader(pattern))
	sc.Mode = 0 // read runes, no tokens
	re := "^"
	for sc.Peek() != scanner.EOF {
		switch ch := sc.Next(); {
		case ch == '*' && sc.Peek() == '*':
			sc.Next()
			if sc.Peek() == '/' {
				sc.Next()
			}
			if sc.Peek() == scanner.EOF {
				re += ".*"
			} else {
				re += "(.*/)?"
			}
		case ch == '*':
			re += "[^/]*"
		case ch == '?':
			re += "[^/]"
		case strings.ContainsRune(".+()|{}$", ch):
			re += `\` + string(ch)
		case ch == '\\':
			if sc.Peek() != scanner.EOF {
				re += `\` + string(sc.Next())
			} else {
				re += `\\`
			}
		default:
			re += string(ch)
		}
	}
	return regexp.Compile(re + "$")
}

// excludedBy returns the pattern that leaves the context path p out, or
// nil when p is sent. As in Docker, a pattern matches a path or any of its
// parent directories, and the last pattern that matches decides.
func (d dockerignore) excludedBy(p string) *ignorePattern {
	var decided *ignorePattern
	for i := range d {
		pat := &d[i]
		if pat.exception != (decided != nil) {
			continue // only an exception can change an excluded path, and only an exclusion a sent one
		}
		if pat.matches(p) {
			decided = nil
			if !pat.exception {
				decided = pat
			}
		}
	}
	return decided
}

func (p *ignorePattern) matches(file string) bool {
	if p.re.MatchString(file) {
		return true
	}
	elems := strings.Split(file, "/")
	for i := 1; i < len(elems); i++ {
		if p.re.MatchString(strings.Join(elems[:i], "/")) {
			return true
		}
	}
	return false
}
