package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// module is what `go build` of a package reads from its own module.
type module struct {
	dir       string // the module root, absolute
	goVersion string // go.mod's toolchain line (without "go"), else its go line
	// files are the module's files the build reads, relative to dir and
	// slash-separated: go.mod, go.sum, and the Go, assembly, syso and
	// embedded files of each of its packages the build imports.
	files []string
	// pkgOf maps each of those files to the import path of its package.
	pkgOf map[string]string
}

// listPackage runs go list on pkg in dir for each platform (GOOS/GOARCH):
// a file one architecture builds and the other does not is needed all the
// same. CGO is off as in the image.
func listPackage(dir, pkg string, platforms []string) (*module, error) {
	m := &module{pkgOf: map[string]string{"go.mod": "", "go.sum": ""}}
	for _, platform := range platforms {
		goos, goarch, ok := strings.Cut(platform, "/")
		if !ok {
			return nil, fmt.Errorf("platform %q is not GOOS/GOARCH", platform)
		}
		out, err := goCmd(dir, []string{"GOOS=" + goos, "GOARCH=" + goarch, "CGO_ENABLED=0"},
			"list", "-deps", "-json=ImportPath,Dir,Module,GoFiles,SFiles,HFiles,SysoFiles,EmbedFiles,Error", pkg)
		if err != nil {
			return nil, err
		}
		if err := m.add(out); err != nil {
			return nil, fmt.Errorf("go list %s for %s: %w", pkg, platform, err)
		}
	}
	if m.dir == "" {
		return nil, fmt.Errorf("go list %s: no package of the main module", pkg)
	}
	var mod struct{ Go, Toolchain string }
	out, err := goCmd(m.dir, nil, "mod", "edit", "-json")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		return nil, fmt.Errorf("go mod edit -json: %w", err)
	}
	m.goVersion = strings.TrimPrefix(mod.Toolchain, "go")
	if m.goVersion == "" {
		m.goVersion = mod.Go
	}
	for f := range m.pkgOf {
		m.files = append(m.files, f)
	}
	sort.Strings(m.files)
	return m, nil
}

// add records the main module's packages of go list's JSON stream.
func (m *module) add(out []byte) error {
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath, Dir string
			Module          *struct {
				Main bool
				Dir  string
			}
			GoFiles, SFiles, HFiles, SysoFiles, EmbedFiles []string
			Error                                          *struct{ Err string }
		}
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if p.Error != nil {
			return fmt.Errorf("%s: %s", p.ImportPath, p.Error.Err)
		}
		if p.Module == nil || !p.Module.Main {
			continue
		}
		m.dir = p.Module.Dir
		rel, err := filepath.Rel(m.dir, p.Dir)
		if err != nil {
			return err
		}
		for _, files := range [][]string{p.GoFiles, p.SFiles, p.HFiles, p.SysoFiles, p.EmbedFiles} {
			for _, f := range files {
				m.pkgOf[filepath.ToSlash(filepath.Join(rel, f))] = p.ImportPath
			}
		}
	}
}

func goCmd(dir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
