package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// memorySampleEvery is how often the watcher reads the manager's
	// resident set: VmHWM says how high it went, not when, nor of what.
	memorySampleEvery = 50 * time.Millisecond
	// memoryCaptureStep is how far above the last capture the resident
	// set must go for another one: each capture allocates in the manager
	// (its metrics page, its heap profile), so one per sample would feed
	// what it measures.
	memoryCaptureStep = 1 << 20
)

// memoryWatcher follows our manager's resident set for BENCH_PROFILE, from
// its start to the end of the benchmark, into dir: memory.csv has a sample
// every memorySampleEvery (anonymous and file-backed pages apart), and at
// each new high of a phase (see phase) it saves the Go runtime's memory
// classes (runtime/metrics, as the manager's /metrics serves them) and a
// heap profile of that moment, as <phase>-peak-metrics.txt and
// <phase>-peak-heap.pb.gz. The last pair a phase saves is the nearest to
// its high-water mark. The heap profile is as of the last GC before the
// capture, the metrics are of the capture itself.
type memoryWatcher struct {
	pid        func() int
	metricsURL string
	profiler   *profiler
	dir        string

	mu sync.Mutex
	// phaseName names the files of the current phase's captures;
	// captured is the resident set of its last one.
	phaseName string
	captured  uint64

	stop func()
	done chan error
}

// watchMemory starts a memoryWatcher of the process pid; its samples are
// of phase "startup" until the first call of phase.
func watchMemory(pid func() int, metricsURL string, p *profiler) (*memoryWatcher, error) {
	w := &memoryWatcher{pid: pid, metricsURL: metricsURL, profiler: p, dir: p.dir, phaseName: "startup", done: make(chan error, 1)}
	csv, err := os.Create(filepath.Join(w.dir, "memory.csv"))
	if err != nil {
		return nil, err
	}
	if _, err := fmt.Fprintln(csv, "seconds,phase,rss_bytes,rss_anon_bytes,rss_file_bytes,rss_high_water_bytes"); err != nil {
		_ = csv.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.stop = cancel
	go func() {
		err := w.sample(ctx, csv)
		if cerr := csv.Close(); err == nil {
			err = cerr
		}
		w.done <- err
	}()
	return w, nil
}

// phase starts a new phase: its highs are its own, its captures named
// after it.
func (w *memoryWatcher) phase(name string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.phaseName, w.captured = name, 0
}

// close stops the watcher and reports the first error it met.
func (w *memoryWatcher) close() error {
	if w == nil {
		return nil
	}
	w.stop()
	return <-w.done
}

func (w *memoryWatcher) sample(ctx context.Context, csv *os.File) error {
	out := bufio.NewWriter(csv)
	defer out.Flush()
	start := time.Now()
	tick := time.NewTicker(memorySampleEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return out.Flush()
		case <-tick.C:
		}
		rss, err := residentSet(w.pid())
		if err != nil {
			// The manager restarts, or is gone: the benchmark says so.
			continue
		}
		w.mu.Lock()
		phase, capture := w.phaseName, rss.total >= w.captured+memoryCaptureStep
		if capture {
			w.captured = rss.total
		}
		w.mu.Unlock()
		if _, err := fmt.Fprintf(out, "%.2f,%s,%d,%d,%d,%d\n", time.Since(start).Seconds(), phase, rss.total, rss.anon, rss.file, rss.highWater); err != nil {
			return err
		}
		if capture {
			if err := w.capture(ctx, phase); err != nil && ctx.Err() == nil {
				return err
			}
		}
	}
}

// capture saves the manager's metrics page and heap profile as phase's
// peak.
func (w *memoryWatcher) capture(ctx context.Context, phase string) error {
	prefix := filepath.Join(w.dir, phase+"-peak")
	if err := w.profiler.saveURL(ctx, w.metricsURL, prefix+"-metrics.txt"); err != nil {
		return err
	}
	return w.profiler.save(ctx, "heap", prefix+"-heap.pb.gz")
}

// residentSize is a process's resident set, its anonymous and file-backed
// pages apart (shared memory is the rest), and its high-water mark (VmHWM):
// the first sample's is the manager's start-up peak, its informers' first
// sync included.
type residentSize struct{ total, anon, file, highWater uint64 }

func residentSet(pid int) (residentSize, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return residentSize{}, fmt.Errorf("reading the RSS of process %d: %w", pid, err)
	}
	return parseResidentSet(string(raw))
}

// parseResidentSet reads VmRSS, RssAnon, RssFile and VmHWM of a
// /proc/<pid>/status.
func parseResidentSet(status string) (residentSize, error) {
	var rs residentSize
	fields := map[string]*uint64{"VmRSS:": &rs.total, "RssAnon:": &rs.anon, "RssFile:": &rs.file, "VmHWM:": &rs.highWater}
	found := 0
	for line := range strings.SplitSeq(status, "\n") {
		key, rest, _ := strings.Cut(line, "\t")
		dst, ok := fields[key]
		if !ok {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return rs, fmt.Errorf("%s %q: %w", key, rest, err)
		}
		*dst = kb << 10
		found++
	}
	if found != len(fields) {
		return rs, fmt.Errorf("status has %d of VmRSS, RssAnon, RssFile and VmHWM", found)
	}
	return rs, nil
}
