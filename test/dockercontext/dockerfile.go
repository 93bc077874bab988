package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// instruction is one Dockerfile instruction, its continuation lines joined.
type instruction struct {
	line int    // where it starts, 1-based
	cmd  string // upper case: FROM, COPY, RUN, ...
	args string // the rest, as written
}

var instructions = map[string]bool{
	"ADD": true, "ARG": true, "CMD": true, "COPY": true, "ENTRYPOINT": true, "ENV": true,
	"EXPOSE": true, "FROM": true, "HEALTHCHECK": true, "LABEL": true, "MAINTAINER": true,
	"ONBUILD": true, "RUN": true, "SHELL": true, "STOPSIGNAL": true, "USER": true,
	"VOLUME": true, "WORKDIR": true,
}

// parseDockerfile splits a Dockerfile into instructions as Docker reads
// them with its default escape character: comment lines dropped, lines
// ending in a backslash joined to the next. Heredocs are not read; their
// bodies show up as unknown instructions and are refused.
func parseDockerfile(data []byte) ([]instruction, error) {
	var out []instruction
	var cur *instruction
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(text, "#") {
			if d := strings.ToLower(strings.ReplaceAll(text, " ", "")); cur == nil && len(out) == 0 && strings.HasPrefix(d, "#escape=") && d != `#escape=\` {
				return nil, fmt.Errorf("line %d: only the default escape character is supported", n)
			}
			continue
		}
		if text == "" {
			continue
		}
		more := strings.HasSuffix(text, `\`)
		text = strings.TrimSuffix(text, `\`)
		if cur == nil {
			word, rest, _ := strings.Cut(text, " ")
			word = strings.ToUpper(strings.TrimSpace(word))
			if !instructions[word] {
				return nil, fmt.Errorf("line %d: unknown instruction %q", n, word)
			}
			cur = &instruction{line: n, cmd: word, args: strings.TrimSpace(rest)}
		} else {
			cur.args += " " + text
		}
		if !more {
			out = append(out, *cur)
			cur = nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: the last instruction ends in a line continuation", cur.line)
	}
	return out, nil
}

// copyInst is a COPY (or ADD) from the build context.
type copyInst struct {
	line    int
	sources []string // cleaned, relative to the context root; "." is all of it
	dest    string   // absolute in the image
	destDir bool     // the destination is a directory: sources land inside it
}

// builder is what the stage that runs `go build` of the package sees: the
// context files its COPY lines bring in before that build, and where.
type builder struct {
	from    instruction
	image   string // the FROM image, without --platform and AS
	copies  []copyInst
	workdir string      // where go build runs
	build   instruction // the RUN of go build
}

// findBuilder returns the stage whose RUN builds pkg (as written in the
// Dockerfile, e.g. ./cmd/manager).
func findBuilder(insts []instruction, pkg string) (*builder, error) {
	var b *builder
	for _, in := range insts {
		switch in.cmd {
		case "FROM":
			if b != nil && b.build.line != 0 {
				return b, nil
			}
			b = &builder{from: in, image: fromImage(in.args), workdir: "/"}
		case "WORKDIR":
			if b == nil || strings.Contains(in.args, "$") {
				return nil, fmt.Errorf("line %d: WORKDIR %q: only a literal WORKDIR after FROM is supported", in.line, in.args)
			}
			b.workdir = path.Join(b.workdir, in.args)
		case "COPY", "ADD":
			if b == nil || b.build.line != 0 {
				continue
			}
			c, fromContext, err := parseCopy(in, b.workdir)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", in.line, err)
			}
			if fromContext {
				b.copies = append(b.copies, c)
			}
		case "RUN":
			if b != nil && b.build.line == 0 && runsGoBuild(in.args, pkg) {
				b.build = in
			}
		}
	}
	if b == nil || b.build.line == 0 {
		return nil, fmt.Errorf("no stage runs go build of %s", pkg)
	}
	return b, nil
}

func runsGoBuild(args, pkg string) bool {
	i := strings.Index(args, "go build")
	return i >= 0 && strings.Contains(args[i:], pkg)
}

// fromImage returns the image of a FROM's arguments.
func fromImage(args string) string {
	for _, f := range strings.Fields(args) {
		if !strings.HasPrefix(f, "--") {
			return f
		}
	}
	return ""
}

// parseCopy reads a COPY or ADD; fromContext is false for one that copies
// from a stage, an image or a URL.
func parseCopy(in instruction, workdir string) (c copyInst, fromContext bool, err error) {
	c.line = in.line
	args := in.args
	for strings.HasPrefix(args, "--") {
		flag, rest, _ := strings.Cut(args, " ")
		args = strings.TrimSpace(rest)
		name, _, _ := strings.Cut(flag, "=")
		switch name {
		case "--from":
			return c, false, nil
		case "--parents", "--exclude":
			return c, false, fmt.Errorf("%s %s is not supported by this check", in.cmd, name)
		}
	}
	var words []string
	if strings.HasPrefix(args, "[") {
		if err := json.Unmarshal([]byte(args), &words); err != nil {
			return c, false, fmt.Errorf("%s %s: %w", in.cmd, args, err)
		}
	} else {
		words = strings.Fields(args)
	}
	if len(words) < 2 {
		return c, false, fmt.Errorf("%s needs a source and a destination", in.cmd)
	}
	dest := words[len(words)-1]
	for _, w := range words {
		if strings.Contains(w, "$") {
			return c, false, fmt.Errorf("%s %s: variables are not supported by this check", in.cmd, w)
		}
	}
	for _, s := range words[:len(words)-1] {
		if in.cmd == "ADD" && (strings.Contains(s, "://") || strings.HasPrefix(s, "git@")) {
			return c, false, nil
		}
		if _, err := path.Match(s, ""); err != nil {
			return c, false, fmt.Errorf("%s source %s: %w", in.cmd, s, err)
		}
		s = strings.TrimPrefix(path.Clean("/"+s), "/")
		if s == "" {
			s = "."
		}
		c.sources = append(c.sources, s)
	}
	c.destDir = strings.HasSuffix(dest, "/") || path.Base(dest) == "." || len(c.sources) > 1 || hasMeta(c.sources[0])
	if !path.IsAbs(dest) {
		dest = path.Join(workdir, dest)
	}
	c.dest = path.Clean(dest)
	return c, true, nil
}

func hasMeta(p string) bool { return strings.ContainsAny(p, `*?[\`) }

// lands returns where the context file f (slash-separated, relative to the
// context root) lands in the image through c, as Docker copies: a
// directory source's contents into the destination, a file source into a
// destination directory or onto the destination path.
func (c copyInst) lands(f string) (string, bool) {
	elems := strings.Split(f, "/")
	for _, s := range c.sources {
		var dir string // the directory source that holds f
		switch {
		case s == ".":
			dir = "."
		case hasMeta(s):
			n := len(strings.Split(s, "/"))
			if n > len(elems) {
				continue
			}
			p := strings.Join(elems[:n], "/")
			if ok, _ := path.Match(s, p); !ok {
				continue
			}
			if p != f {
				dir = p
			}
		case s == f:
		case strings.HasPrefix(f, s+"/"):
			dir = s
		default:
			continue
		}
		if dir == "" { // f is itself the source
			if c.destDir {
				return path.Join(c.dest, path.Base(f)), true
			}
			return c.dest, true
		}
		if dir == "." {
			return path.Join(c.dest, f), true
		}
		return path.Join(c.dest, strings.TrimPrefix(f, dir+"/")), true
	}
	return "", false
}
