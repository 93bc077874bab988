package appmetrics

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// fakeClock is a settable clock for the exporter.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func startWithClock(t *testing.T) (*Exporter, *fakeClock) {
	t.Helper()
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	e, err := start(Options{}, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	})
	return e, clock
}

// A counter grows at its rate between changes, keeps its count when the rate
// changes, and jumps by what Add counts.
func TestCounterFollowsRateAndAdds(t *testing.T) {
	e, clock := startWithClock(t)
	steps := []struct {
		name string
		do   func()
		want float64
	}{
		{"rate 10/s for 3s", func() { e.SetRate("ns", "a", "200", 10); clock.advance(3 * time.Second) }, 30},
		{"rate 2/s for 500ms", func() { e.SetRate("ns", "a", "200", 2); clock.advance(500 * time.Millisecond) }, 31},
		{"add 4", func() { e.Add("ns", "a", "200", 4) }, 35},
		{"rate 0 for 1h", func() { e.SetRate("ns", "a", "200", 0); clock.advance(time.Hour) }, 35},
	}
	for _, s := range steps {
		s.do()
		if got := e.Value("ns", "a", "200"); got != s.want {
			t.Fatalf("after %s: value %v, want %v", s.name, got, s.want)
		}
	}
	if got := e.Value("ns", "a", "500"); got != 0 {
		t.Fatalf("unset series: value %v, want 0", got)
	}
}

// The scrape publishes each pod and code as its own counter, valued at the
// time of the scrape, and a removed pod's series are gone.
func TestScrapePublishesCountersPerPodAndCode(t *testing.T) {
	e, clock := startWithClock(t)
	e.SetRate("ns", "a", "200", 10)
	e.SetRate("ns", "a", "500", 1)
	e.Add("ns", "b", "200", 7)
	e.SetRate("ns", "gone", "200", 3)
	clock.advance(2 * time.Second)
	e.RemovePod("ns", "gone")

	expected := `
# HELP http_requests_total Total number of HTTP requests by status code.
# TYPE http_requests_total counter
http_requests_total{code="200",namespace="ns",pod="a"} 20
http_requests_total{code="500",namespace="ns",pod="a"} 2
http_requests_total{code="200",namespace="ns",pod="b"} 7
`
	if err := testutil.ScrapeAndCompare("http://"+e.Addr()+"/metrics", strings.NewReader(expected)); err != nil {
		t.Fatal(err)
	}
}

// Tests and scrapes change and read the counters concurrently; run with
// -race to check.
func TestConcurrentUpdatesAndScrapes(t *testing.T) {
	e, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for j := range 50 {
				e.SetRate("ns", "a", "200", float64(j))
				e.Add("ns", "a", "500", 1)
				if i == 0 {
					e.RemovePod("ns", "b")
				}
			}
		})
	}
	wg.Go(func() {
		for range 10 {
			resp, err := http.Get("http://" + e.Addr() + "/metrics")
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("scrape: %s", resp.Status)
			}
		}
	})
	wg.Wait()
	if got := e.Value("ns", "a", "500"); got != 200 {
		t.Fatalf("500s counted: %v, want 200", got)
	}
}

func TestRejectsDecreasingCounts(t *testing.T) {
	e, _ := startWithClock(t)
	for name, f := range map[string]func(){
		"negative rate": func() { e.SetRate("ns", "a", "200", -1) },
		"negative add":  func() { e.Add("ns", "a", "200", -1) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			f()
		})
	}
}
