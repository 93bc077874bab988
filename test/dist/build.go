package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// pluginBinary is the executable's name in each archive, the one krew's
// manifest names as bin: kubectl runs it as `kubectl eds`.
const pluginBinary = "kubectl-eds"

// build cross-builds the plugin for p into bin. -s -w leave out the symbol
// table and DWARF, a third of the size, which a release binary does not
// need; -trimpath and -buildvcs=false keep the machine's paths and the
// checkout's state out of it, so that the bytes depend on the sources and
// the flags alone.
func build(cfg config, p platform, bin string) error {
	ldflags := strings.TrimSpace("-s -w " + cfg.ldflags)
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", bin, cfg.pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.os, "GOARCH="+p.arch)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s for %s: %w", cfg.pkg, p, err)
	}
	return nil
}
