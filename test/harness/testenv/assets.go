package testenv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// AssetsEnv names the directory holding the control-plane binaries, as
// controller-runtime's envtest expects.
const AssetsEnv = "KUBEBUILDER_ASSETS"

// modulePath identifies the product go.mod among the repository's modules
// (the tools module under test/tools has its own).
const modulePath = "github.com/extendeddaemonset/extendeddaemonset"

// AssetsDir returns the directory of the control-plane binaries. A missing
// directory is an error, not a reason to skip: a test that cannot run must
// say so loudly.
func AssetsDir() (string, error) {
	dir := os.Getenv(AssetsEnv)
	if dir == "" {
		return "", errors.New(AssetsEnv + ` is not set: run "make testbin" and export ` + AssetsEnv +
			` as the directory it prints last, or run "make test", which sets it`)
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if err := checkExecutable(dir, name); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// AssetPath returns the path of one binary in AssetsDir.
func AssetPath(name string) (string, error) {
	dir, err := AssetsDir()
	if err != nil {
		return "", err
	}
	if err := checkExecutable(dir, name); err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

func checkExecutable(dir, name string) error {
	info, err := os.Stat(filepath.Join(dir, name))
	if err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0 {
		return nil
	}
	return fmt.Errorf("%s=%s has no executable %s: run \"make testbin\" and export %s as the directory it prints last, or run \"make test\", which sets it",
		AssetsEnv, dir, name, AssetsEnv)
}

// RepoRoot returns the directory of the product go.mod, found by walking up
// from the working directory (go test runs in the package's directory). It
// panics outside the repository, where no test of it can run anyway.
func RepoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		panic(fmt.Sprintf("testenv: working directory: %v", err))
	}
	for {
		if isProductModule(filepath.Join(dir, "go.mod")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			panic("testenv: no go.mod of module " + modulePath + " above the working directory")
		}
		dir = parent
	}
}

func isProductModule(goMod string) bool {
	data, err := os.ReadFile(goMod)
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if fields := bytes.Fields(sc.Bytes()); len(fields) == 2 && string(fields[0]) == "module" {
			return string(fields[1]) == modulePath
		}
	}
	return false
}
