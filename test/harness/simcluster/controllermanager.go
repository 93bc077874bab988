package simcluster

import (
	"bytes"
	"fmt"
	"os"
)

// ControllerManagerPID is kube-controller-manager's process ID, for
// benchmarks that read its CPU time and memory from /proc.
func (c *Cluster) ControllerManagerPID() int { return c.component(controllerName).PID() }

// ControllerManagerURL is the base URL of kube-controller-manager's secure
// port. It authenticates no one: /metrics answers only when the caller
// adds it to the paths it serves anonymously, with ExtraArgs
// {"kube-controller-manager": {"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics"}}.
func (c *Cluster) ControllerManagerURL() (string, error) {
	pid := c.ControllerManagerPID()
	// The port is read back from the command line, where the last
	// --secure-port wins as it does for the binary, so that ExtraArgs may
	// choose it.
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return "", fmt.Errorf("reading kube-controller-manager's command line: %w", err)
	}
	port := ""
	for arg := range bytes.SplitSeq(cmdline, []byte{0}) {
		if p, ok := bytes.CutPrefix(arg, []byte("--secure-port=")); ok {
			port = string(p)
		}
	}
	if port == "" {
		return "", fmt.Errorf("kube-controller-manager (pid %d) has no --secure-port", pid)
	}
	return "https://127.0.0.1:" + port, nil
}
