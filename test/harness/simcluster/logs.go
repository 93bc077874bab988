package simcluster

import (
	"fmt"
	"io"
	"os"

	"github.com/extendeddaemonset/extendeddaemonset/test/internal/daemon"
)

// DumpLogs writes the last lines of every component's log to w, for a test
// that failed. The logs live in the cluster's temporary directory, so call it
// before Stop.
func (c *Cluster) DumpLogs(w io.Writer, lines int) {
	if _, err := os.Stat(c.logDir); err != nil {
		fmt.Fprintf(w, "no component logs: %v\n", err)
		return
	}
	for _, comp := range c.components() {
		fmt.Fprintf(w, "==== %s (%s) ====\n%s\n", comp.Name(), comp.LogPath(), daemon.Tail(comp.LogPath(), lines))
	}
}

// LogDir is the directory of the components' logs, one NAME.log per binary.
// It is removed by Stop.
func (c *Cluster) LogDir() string { return c.logDir }
