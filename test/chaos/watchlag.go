package chaos

import (
	"bytes"
	"net/http"
	"time"
)

// SetWatchLag delays every watch event by lag from now on, streams already
// open included, as an API server whose watch cache falls behind its
// storage: a client's writes are done before its informers learn of them.
// Zero ends the lag.
func (p *FaultProxy) SetWatchLag(lag time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watchLag = lag
}

func (p *FaultProxy) currentWatchLag() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.watchLag
}

func isWatch(r *http.Request) bool {
	v := r.URL.Query().Get("watch")
	return r.Method == http.MethodGet && (v == "true" || v == "1")
}

// streamWatch forwards the watch r through a delay line.
func (p *FaultProxy) streamWatch(w http.ResponseWriter, r *http.Request) {
	l := &laggingWriter{w: w, lag: p.currentWatchLag, chunks: make(chan chunk, 1024), done: make(chan struct{})}
	go l.run()
	defer l.close()
	p.proxy.ServeHTTP(l, r)
}

// laggingWriter writes each chunk of a stream lag after it came, in the
// order they came.
type laggingWriter struct {
	w      http.ResponseWriter
	lag    func() time.Duration
	chunks chan chunk
	done   chan struct{}
}

type chunk struct {
	data []byte
	due  time.Time
}

func (l *laggingWriter) Header() http.Header { return l.w.Header() }

// WriteHeader answers at once: the client waits for the answer before it
// waits for events.
func (l *laggingWriter) WriteHeader(code int) {
	l.w.WriteHeader(code)
	_ = http.NewResponseController(l.w).Flush()
}

func (l *laggingWriter) Write(b []byte) (int, error) {
	l.chunks <- chunk{data: bytes.Clone(b), due: time.Now().Add(l.lag())}
	return len(b), nil
}

// Flush does nothing: the delay line flushes each chunk as it writes it.
func (l *laggingWriter) Flush() {}

func (l *laggingWriter) run() {
	defer close(l.done)
	for c := range l.chunks {
		time.Sleep(time.Until(c.due))
		if _, err := l.w.Write(c.data); err != nil {
			continue
		}
		_ = http.NewResponseController(l.w).Flush()
	}
}

// close waits until every chunk is written, before the handler returns and
// the response is gone.
func (l *laggingWriter) close() {
	close(l.chunks)
	<-l.done
}
