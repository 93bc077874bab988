package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// profileWindow is the length of each CPU profile taken during a run: a
// profile is only served whole, so the last one ends up to a window after
// the rollout.
const profileWindow = 5 * time.Second

// profiler takes Go profiles of our manager during each of its runs, into
// dir: CPU profiles one window after another for as long as the rollout
// lasts (`go tool pprof` merges them), and the heap after each window,
// where the largest is the nearest to the peak RSS. The heap profiles are
// taken after a GC, so they show what is live.
type profiler struct {
	// baseURL serves /debug/pprof/.
	baseURL, dir string
}

// newProfiler makes a profiler that saves into a directory of dir of its
// own per rate limit, for a manager to serve its profiles on a free port.
func newProfiler(dir string, limit rateLimit) (*profiler, error) {
	dir = filepath.Join(dir, fmt.Sprintf("qps-%d", limit.qps))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	addr, err := freeLoopbackAddress()
	if err != nil {
		return nil, err
	}
	return &profiler{baseURL: "http://" + addr, dir: dir}, nil
}

// freeLoopbackAddress is an address on the loopback interface nothing
// listens on.
func freeLoopbackAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// during profiles until stop is called; stop waits for the window under
// way and reports the first error.
func (p *profiler) during(ctx context.Context, name string) (stop func() error) {
	if p == nil {
		return func() error { return nil }
	}
	done := make(chan struct{})
	result := make(chan error, 1)
	go func() {
		var err error
		for i := 0; err == nil; i++ {
			prefix := filepath.Join(p.dir, fmt.Sprintf("%s-%02d", name, i))
			err = p.save(ctx, "profile?seconds="+strconv.Itoa(int(profileWindow.Seconds())), prefix+"-cpu.pb.gz")
			if err == nil {
				err = p.save(ctx, "heap?gc=1", prefix+"-heap.pb.gz")
			}
			select {
			case <-done:
				result <- err
				return
			default:
			}
		}
		<-done
		result <- err
	}()
	return func() error {
		close(done)
		return <-result
	}
}

func (p *profiler) save(ctx context.Context, profile, path string) error {
	return p.saveURL(ctx, p.baseURL+"/debug/pprof/"+profile, path)
}

// saveURL saves what url serves into path.
func (p *profiler) saveURL(ctx context.Context, url, path string) error {
	ctx, cancel := context.WithTimeout(ctx, profileWindow+30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("getting %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("getting %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return fmt.Errorf("saving %s: %w", url, err)
	}
	return f.Close()
}
