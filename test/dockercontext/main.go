// Command dockercontext checks, without a Docker daemon, that the image's
// build gets every file `go build` of the manager reads. It reads the
// Dockerfile's stage that runs `go build ./cmd/manager`, the COPY lines
// before that build, and the ignore file (the Dockerfile's own
// <Dockerfile>.dockerignore, else .dockerignore at the context root) with
// Docker's pattern rules, and compares what lands in the stage with what
// `go list -deps` says the build reads from this module (for each target
// platform, CGO off): each package's Go, assembly and embedded files, and
// go.mod and go.sum. It also requires a golang builder image to be go.mod's
// Go version.
//
//	go run ./test/dockercontext [-C DIR] [-f DOCKERFILE] [-pkg ./cmd/manager]
//
// It prints what is missing and the line that fixes it, and exits 1; it
// prints nothing when the build has what it needs. `make verify` runs it.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

type options struct {
	dir        string   // the build context
	dockerfile string   // relative to dir unless absolute
	pkg        string   // the package the builder stage builds, as its RUN names it
	platforms  []string // GOOS/GOARCH pairs the image is built for
}

func main() {
	var o options
	var platforms string
	flag.StringVar(&o.dir, "C", ".", "the build context: the directory `docker build` is given")
	flag.StringVar(&o.dockerfile, "f", "Dockerfile", "the Dockerfile, relative to the context")
	flag.StringVar(&o.pkg, "pkg", "./cmd/manager", "the package the builder stage's go build builds")
	flag.StringVar(&platforms, "platforms", "linux/amd64,linux/arm64", "the image's platforms, comma-separated")
	flag.Parse()
	o.platforms = strings.Split(platforms, ",")
	problems, err := run(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dockercontext:", err)
		os.Exit(1)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "dockercontext: %s does not give `go build %s` what it reads:\n", o.dockerfile, o.pkg)
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, "- "+p)
		}
		os.Exit(1)
	}
}

func run(o options) ([]string, error) {
	dockerfile := o.dockerfile
	if !filepath.IsAbs(dockerfile) {
		dockerfile = filepath.Join(o.dir, dockerfile)
	}
	data, err := os.ReadFile(dockerfile)
	if err != nil {
		return nil, err
	}
	insts, err := parseDockerfile(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dockerfile, err)
	}
	b, err := findBuilder(insts, o.pkg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dockerfile, err)
	}
	ctx, err := readContext(o.dir, dockerfile)
	if err != nil {
		return nil, err
	}
	m, err := listPackage(o.dir, o.pkg, o.platforms)
	if err != nil {
		return nil, err
	}
	absDir, err := filepath.Abs(o.dir)
	if err != nil {
		return nil, err
	}
	modRel, err := filepath.Rel(absDir, m.dir)
	if err != nil || modRel == ".." || strings.HasPrefix(modRel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("the module %s is outside the build context %s", m.dir, absDir)
	}
	return check(ctx, b, m, filepath.ToSlash(modRel)), nil
}

// readContext reads the ignore file Docker applies to the context dir for
// this Dockerfile.
func readContext(dir, dockerfile string) (buildContext, error) {
	ctx := buildContext{dir: dir}
	for _, name := range []string{dockerfile + ".dockerignore", filepath.Join(dir, ".dockerignore")} {
		data, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return ctx, err
		}
		ctx.ignoreFile = filepath.Base(name)
		ctx.ignore, err = parseDockerignore(data)
		if err != nil {
			return ctx, fmt.Errorf("%s: %w", name, err)
		}
		return ctx, nil
	}
	return ctx, nil
}
