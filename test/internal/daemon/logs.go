package daemon

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// PrefixWriter writes whole lines, each prefixed, so that several daemons
// can share one writer. Writers that share a mutex never interleave within a
// line.
type PrefixWriter struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

// NewPrefixWriter returns a writer to w that prefixes every line and holds mu
// while writing.
func NewPrefixWriter(mu *sync.Mutex, w io.Writer, prefix string) *PrefixWriter {
	return &PrefixWriter{mu: mu, w: w, prefix: prefix}
}

func (p *PrefixWriter) Write(b []byte) (int, error) {
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

// Tail returns the last n lines of the file at path, or a note saying why it
// cannot.
func Tail(path string, n int) string {
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
