package main

import (
	"strings"
	"testing"
)

var platforms = []string{"linux/amd64", "linux/arm64"}

// TestFixtures runs the check on the Dockerfiles of testdata/module, a
// module whose binary imports a package with an embedded file and a file
// built on arm64 only.
func TestFixtures(t *testing.T) {
	for _, tc := range []struct {
		dockerfile string
		platforms  []string
		want       []string // one substring per problem, in order
	}{
		{dockerfile: "good.Dockerfile"},
		{dockerfile: "missing-dir.Dockerfile", want: []string{
			"lib/ is not copied to /src/lib/, where go build reads 3 files (package example.com/fixture/lib): lib/lib.go, lib/lib_arm64.go, lib/queries/up.txt\n  add before line 5: COPY lib/ lib/",
		}},
		{dockerfile: "ignored.Dockerfile", want: []string{
			`ignored.Dockerfile.dockerignore line 2 "**/*.txt" leaves out of the build context lib/queries/up.txt, which go build reads` +
				"\n  remove that line, or add after it: !lib/queries/up.txt",
		}},
		{dockerfile: "layout.Dockerfile", want: []string{
			"line 4: the builder image golang:1.26.3-alpine is not go.mod's Go 1.27.0",
			`line 10: COPY source docs is not in the build context (.dockerignore line 3 "/docs/" excludes it)`,
			"go.mod is not copied to /src/go.mod, where go build reads it\n  add before line 11: COPY go.mod ./",
			"go.sum is not copied to /src/go.sum",
			"lib/ is not copied to /src/lib/, where go build reads 2 files (package example.com/fixture/lib): lib/lib_arm64.go, lib/queries/up.txt",
		}},
		// Built for amd64 alone, the arm64 file is not needed.
		{dockerfile: "layout.Dockerfile", platforms: []string{"linux/amd64"}, want: []string{
			"line 4:", "line 10:", "go.mod", "go.sum",
			"where go build reads 1 file (package example.com/fixture/lib): lib/queries/up.txt",
		}},
	} {
		t.Run(strings.Join(append([]string{tc.dockerfile}, tc.platforms...), " "), func(t *testing.T) {
			o := options{dir: "testdata/module", dockerfile: tc.dockerfile, pkg: "./cmd/manager", platforms: platforms}
			if tc.platforms != nil {
				o.platforms = tc.platforms
			}
			problems, err := run(o)
			if err != nil {
				t.Fatal(err)
			}
			if len(problems) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(problems), len(tc.want), strings.Join(problems, "\n"))
			}
			for i, p := range problems {
				if !strings.Contains(p, tc.want[i]) {
					t.Errorf("problem %d:\n%s\nwant it to contain:\n%s", i, p, tc.want[i])
				}
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		o    options
		want string
	}{
		{options{dir: "testdata/module", dockerfile: "good.Dockerfile", pkg: "./cmd/other", platforms: platforms}, "no stage runs go build of ./cmd/other"},
		{options{dir: "testdata/module", dockerfile: "none.Dockerfile", pkg: "./cmd/manager", platforms: platforms}, "no such file"},
		{options{dir: "testdata/module", dockerfile: "good.Dockerfile", pkg: "./cmd/manager", platforms: []string{"linux"}}, `platform "linux" is not GOOS/GOARCH`},
	} {
		if _, err := run(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%+v) = %v, want an error containing %q", tc.o, err, tc.want)
		}
	}
}

// TestRepository is `make verify`'s check: the image builds the manager
// from what the Dockerfile copies.
func TestRepository(t *testing.T) {
	problems, err := run(options{dir: "../..", dockerfile: "Dockerfile", pkg: "./cmd/manager", platforms: platforms})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Errorf("the Dockerfile lacks what go build reads:\n%s", strings.Join(problems, "\n"))
	}
}
