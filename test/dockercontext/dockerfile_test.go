package main

import (
	"strings"
	"testing"
)

func TestParseDockerfile(t *testing.T) {
	insts, err := parseDockerfile([]byte(`# syntax=docker/dockerfile:1
from golang:1.27.0 AS builder
WORKDIR /src
RUN go build \
	# a comment inside the continuation
	-o /x \

	./cmd/x
copy --chown=1:1 [ "a b", "c/" ]
`))
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(insts))
	for i, in := range insts {
		got[i] = strings.Join([]string{in.cmd, in.args}, "|")
	}
	want := []string{"FROM|golang:1.27.0 AS builder", "WORKDIR|/src", "RUN|go build -o /x  ./cmd/x", `COPY|--chown=1:1 [ "a b", "c/" ]`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if insts[2].line != 4 || insts[3].line != 9 {
		t.Errorf("lines %d and %d, want 4 and 9", insts[2].line, insts[3].line)
	}

	for _, bad := range []string{"FROM x\nRUN a \\", "FROM x\nEOF", "# escape=`\nFROM x"} {
		if _, err := parseDockerfile([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestLands(t *testing.T) {
	for _, tc := range []struct {
		copy, file, want string // want "" when the file is not copied
	}{
		{"api/ api/", "api/v1/types.go", "/src/api/v1/types.go"},
		{"api api", "api/v1/types.go", "/src/api/v1/types.go"},
		{"api/ /", "api/v1/types.go", "/v1/types.go"}, // a directory's contents, not the directory
		{"api/ api/", "apis/x.go", ""},
		{". .", "cmd/main.go", "/src/cmd/main.go"},
		{"go.mod go.sum ./", "go.sum", "/src/go.sum"},
		{"go.mod ./", "go.mod", "/src/go.mod"},
		{"go.mod mod", "go.mod", "/src/mod"}, // a file onto a path
		{"cmd/*/main.go out/", "cmd/manager/main.go", "/src/out/main.go"},
		{"c*/ x/", "cmd/manager/main.go", "/src/x/manager/main.go"}, // each matched directory's contents
		{"/lib/../lib/ /opt/lib/", "lib/a.go", "/opt/lib/a.go"},
	} {
		c, fromContext, err := parseCopy(instruction{line: 1, cmd: "COPY", args: tc.copy}, "/src")
		if err != nil || !fromContext {
			t.Fatalf("COPY %s: %v, from the context: %t", tc.copy, err, fromContext)
		}
		got, _ := c.lands(tc.file)
		if got != tc.want {
			t.Errorf("COPY %s: %s lands at %q, want %q", tc.copy, tc.file, got, tc.want)
		}
	}

	for _, args := range []string{"--from=builder /a /b", "--link --from=x a b"} {
		if _, fromContext, err := parseCopy(instruction{cmd: "COPY", args: args}, "/"); err != nil || fromContext {
			t.Errorf("COPY %s: %v, from the context: %t; want a copy from elsewhere", args, err, fromContext)
		}
	}
	for _, args := range []string{"onlyone", "$DIR/ x/", "--parents a/ b/", "[bad json", "a[ b/"} {
		if _, _, err := parseCopy(instruction{cmd: "COPY", args: args}, "/"); err == nil {
			t.Errorf("COPY %s: no error", args)
		}
	}
}
