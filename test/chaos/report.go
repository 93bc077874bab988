package chaos

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// Report is what a chaos run measured, one Result per scenario that ran.
type Report struct {
	Profile string `json:"profile"`
	Nodes   int    `json:"nodes"`
	Seed    uint64 `json:"seed"`

	mu        sync.Mutex
	Scenarios []*Result `json:"scenarios"`
}

// Result is one scenario's figures. Every count of something that went
// wrong must be zero for the scenario to pass.
type Result struct {
	Name string `json:"name"`
	// Run tells apart the runs of one scenario (go test -count): 1, 2...
	Run int `json:"run"`
	// Kills are the SIGKILLs the managers survived.
	Kills int `json:"kills"`
	// Rollouts are the templates rolled out under chaos.
	Rollouts int `json:"rollouts"`
	// Actions are the random walk's actions played, Skipped those the
	// environment could not play.
	Actions int `json:"actions,omitempty"`
	Skipped int `json:"skipped,omitempty"`
	// Requests are the manager's requests through the fault proxy, and
	// Faults those answered with a fault, by kind.
	Requests int               `json:"requests,omitempty"`
	Faults   map[FaultKind]int `json:"faults,omitempty"`
	// WatchLag delayed every watch event of the manager meanwhile.
	WatchLag time.Duration `json:"-"`
	// ManagerExits counts the times a manager exited by itself and was
	// restarted (lost its lease, or could not start).
	ManagerExits int `json:"managerExits"`

	Violations           int `json:"violations"`
	PodsCreatedTwice     int `json:"podsCreatedTwice"`
	TransitionsToldTwice int `json:"transitionsToldTwice"`
	Forbidden            int `json:"forbidden"`

	// Converge is from the end of the chaos (the last kill, the template
	// change under faults) until every node runs the new template; for the
	// random walk, from its last action until every change ended.
	Converge time.Duration `json:"-"`
	// Takeover is from the leader's kill until another holds its lease.
	Takeover time.Duration `json:"-"`
}

// MarshalJSON writes the durations in seconds.
func (s *Result) MarshalJSON() ([]byte, error) {
	type plain Result
	return json.Marshal(struct {
		*plain
		Converge float64 `json:"convergeSeconds"`
		Takeover float64 `json:"takeoverSeconds,omitempty"`
		WatchLag float64 `json:"watchLagSeconds,omitempty"`
	}{(*plain)(s), s.Converge.Seconds(), s.Takeover.Seconds(), s.WatchLag.Seconds()})
}

// Add records a scenario's result, to be filled in as it runs.
func (r *Report) Add(name string) *Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := &Result{Name: name, Run: 1}
	for _, s := range r.Scenarios {
		if s.Name == name {
			res.Run++
		}
	}
	r.Scenarios = append(r.Scenarios, res)
	return res
}

// WriteTable writes the report as a table, one column per scenario.
func (r *Report) WriteTable(w io.Writer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(w, "chaos, %s: %d nodes, seed %d (CHAOS_SEED=%d replays the random choices)\n", r.Profile, r.Nodes, r.Seed, r.Seed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(name string, cell func(*Result) string) {
		cells := []string{name}
		for _, s := range r.Scenarios {
			cells = append(cells, cell(s))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	count := func(f func(*Result) int) func(*Result) string {
		return func(s *Result) string { return fmt.Sprint(f(s)) }
	}
	duration := func(f func(*Result) time.Duration) func(*Result) string {
		return func(s *Result) string {
			if f(s) == 0 {
				return "-"
			}
			return f(s).Round(100 * time.Millisecond).String()
		}
	}
	row("", func(s *Result) string {
		if s.Run > 1 {
			return fmt.Sprintf("%s (%d)", s.Name, s.Run)
		}
		return s.Name
	})
	row("kills survived", count(func(s *Result) int { return s.Kills }))
	row("rollouts", count(func(s *Result) int { return s.Rollouts }))
	row("walk actions (skipped)", func(s *Result) string {
		if s.Actions == 0 {
			return "-"
		}
		return fmt.Sprintf("%d (%d)", s.Actions, s.Skipped)
	})
	row("faults injected", func(s *Result) string {
		if s.Requests == 0 {
			return "-"
		}
		total := 0
		for _, n := range s.Faults {
			total += n
		}
		return fmt.Sprintf("%d of %d requests", total, s.Requests)
	})
	for _, kind := range AllFaults {
		row("  "+string(kind), func(s *Result) string {
			if s.Requests == 0 {
				return "-"
			}
			return fmt.Sprint(s.Faults[kind])
		})
	}
	row("watch events delayed by", duration(func(s *Result) time.Duration { return s.WatchLag }))
	row("manager exits, restarted", count(func(s *Result) int { return s.ManagerExits }))
	row("violations", count(func(s *Result) int { return s.Violations }))
	row("pods created twice", count(func(s *Result) int { return s.PodsCreatedTwice }))
	row("transitions told twice", count(func(s *Result) int { return s.TransitionsToldTwice }))
	row("forbidden requests", count(func(s *Result) int { return s.Forbidden }))
	row("time to converge", duration(func(s *Result) time.Duration { return s.Converge }))
	row("failover", duration(func(s *Result) time.Duration { return s.Takeover }))
	return tw.Flush()
}

// WriteJSON writes the report as JSON to path.
func (r *Report) WriteJSON(path string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
