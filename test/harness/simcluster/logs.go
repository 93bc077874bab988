package simcluster

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// logTailLines is how much of a component's log an error message carries.
const logTailLines = 30

// prefixWriter writes whole lines, each prefixed with the component's name,
// so that several components can share one writer. Writers that share a
// mutex never interleave within a line.
type prefixWriter struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		if _, err := fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.buf[:i]); err != nil {
			return len(b), err
		}
		p.buf = p.buf[i+1:]
	}
}

// tail returns the last n lines of the file at path, or a note saying why it
// cannot.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// DumpLogs writes the last lines of every component's log to w, for a test
// that failed. The logs live in the cluster's temporary directory, so call it
// before Stop.
func (c *Cluster) DumpLogs(w io.Writer, lines int) {
	if _, err := os.Stat(c.logDir); err != nil {
		fmt.Fprintf(w, "no component logs: %v\n", err)
		return
	}
	for _, comp := range c.components() {
		fmt.Fprintf(w, "==== %s (%s) ====\n%s\n", comp.name, comp.logPath, tail(comp.logPath, lines))
	}
}

// LogDir is the directory of the components' logs, one NAME.log per binary.
// It is removed by Stop.
func (c *Cluster) LogDir() string { return c.logDir }
