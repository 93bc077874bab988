package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/proc"
)

// runTimeout bounds one run of the command, cluster start and teardown
// included.
const runTimeout = 2 * time.Minute

// marker is carried by every process the tests start, for proc.Leftovers.
var marker = proc.Mark()

var binDir string

// build compiles the command once for all tests.
var build = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(binDir, "simcluster")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	// The module needs a newer Go than machines may have locally.
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=auto")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	return bin, nil
})

func TestMain(m *testing.M) {
	var err error
	if binDir, err = os.MkdirTemp("", "simcluster-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(binDir)
	os.Exit(code)
}

// output collects a run's standard output and error.
type output struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// execution is one run of the command.
type execution struct {
	cmd   *exec.Cmd
	out   output
	ready chan struct{}
}

// startCommand runs the command with args and watches its standard output for the
// ready line.
func startCommand(t *testing.T, args ...string) *execution {
	t.Helper()
	if _, err := harness.AssetsDir(); err != nil {
		t.Fatal(err)
	}
	bin, err := build()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	t.Cleanup(cancel)
	r := &execution{cmd: exec.CommandContext(ctx, bin, args...), ready: make(chan struct{})}
	r.cmd.Stderr = &r.out
	// A leftover holding the output open must not hide behind a hung Wait.
	r.cmd.WaitDelay = 5 * time.Second
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go r.watch(stdout)
	return r
}

func (r *execution) watch(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		fmt.Fprintln(&r.out, sc.Text())
		if strings.HasPrefix(sc.Text(), "simcluster ready") {
			close(r.ready)
		}
	}
}

func (r *execution) waitReady(t *testing.T) {
	t.Helper()
	select {
	case <-r.ready:
	case <-time.After(runTimeout):
		_ = r.cmd.Process.Kill()
		_, out := r.wait(t)
		t.Fatalf("no ready line; output:\n%s", out)
	}
}

// wait returns the exit code and the output.
func (r *execution) wait(t *testing.T) (int, string) {
	t.Helper()
	err := r.cmd.Wait()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("waiting for simcluster: %v\n%s", err, r.out.String())
	}
	return r.cmd.ProcessState.ExitCode(), r.out.String()
}

func expectNoLeftovers(t *testing.T) {
	t.Helper()
	assets, err := harness.AssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	left, err := proc.Leftovers(marker, assets)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		proc.Kill(left)
		t.Fatalf("processes left behind: %v", left)
	}
}

// The command after "--" sees the cluster's kubeconfig; its exit code
// becomes simcluster's once the cluster is gone.
func TestCommandRunsAgainstTheCluster(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	r := startCommand(t, "--nodes", "1", "--kubeconfig", kubeconfig, "--",
		"sh", "-c", `test -s "$KUBECONFIG" && test "$KUBECONFIG" = "`+kubeconfig+`" && exit 3`)
	if code, out := r.wait(t); code != 3 {
		t.Fatalf("exit code %d, want the command's 3; output:\n%s", code, out)
	}
	expectNoLeftovers(t)
}

// SIGINT reaches the command; what it leaves running in its process group
// is killed, and the cluster is torn down.
func TestCommandGetsForwardedSignal(t *testing.T) {
	trapped := filepath.Join(t.TempDir(), "trapped")
	r := startCommand(t, "--nodes", "1", "--",
		// Background jobs of a non-interactive shell ignore SIGINT, so the
		// sleep outlives the shell unless simcluster kills it.
		"sh", "-c", `trap "exit 7" INT; touch "$0"; sleep 300 & wait`, trapped)
	r.waitReady(t)
	deadline := time.Now().Add(runTimeout)
	for _, err := os.Stat(trapped); err != nil; _, err = os.Stat(trapped) {
		if time.Now().After(deadline) {
			t.Fatalf("the command never set its trap; output:\n%s", r.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := r.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code, out := r.wait(t); code != 7 {
		t.Fatalf("exit code %d, want the trap's 7; output:\n%s", code, out)
	}
	expectNoLeftovers(t)
}

// Without a command the cluster runs until SIGTERM.
func TestClusterRunsUntilSignalled(t *testing.T) {
	r := startCommand(t, "--nodes", "1")
	r.waitReady(t)
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, out := r.wait(t); code != 0 {
		t.Fatalf("exit code %d; output:\n%s", code, out)
	}
	expectNoLeftovers(t)
}
