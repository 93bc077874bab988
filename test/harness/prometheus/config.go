package prometheus

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// jobName is the job label of every scraped series.
const jobName = "harness"

// config is the subset of Prometheus's configuration file the harness
// writes. JSON is YAML, so encoding/json writes a file Prometheus reads.
type config struct {
	Global struct {
		ScrapeInterval     string `json:"scrape_interval"`
		ScrapeTimeout      string `json:"scrape_timeout"`
		EvaluationInterval string `json:"evaluation_interval"`
	} `json:"global"`
	ScrapeConfigs []scrapeConfig `json:"scrape_configs"`
}

type scrapeConfig struct {
	JobName string `json:"job_name"`
	// HonorLabels keeps the exporters' namespace and pod labels as they are,
	// as a real pod-level scrape with relabelling would produce them.
	HonorLabels   bool           `json:"honor_labels"`
	StaticConfigs []staticConfig `json:"static_configs"`
}

type staticConfig struct {
	Targets []string `json:"targets"`
}

func writeConfig(path string, opts Options) error {
	interval := opts.ScrapeInterval
	if interval == 0 {
		interval = DefaultScrapeInterval
	}
	if interval < time.Millisecond || interval%time.Millisecond != 0 {
		return fmt.Errorf("scrape interval %v is not a positive whole number of milliseconds", interval)
	}
	var c config
	c.Global.ScrapeInterval = promDuration(interval)
	// A scrape must end before the next one starts.
	c.Global.ScrapeTimeout = promDuration(max(interval*8/10/time.Millisecond*time.Millisecond, time.Millisecond))
	c.Global.EvaluationInterval = c.Global.ScrapeInterval
	targets := opts.Targets
	if targets == nil {
		targets = []string{}
	}
	c.ScrapeConfigs = []scrapeConfig{{
		JobName:       jobName,
		HonorLabels:   true,
		StaticConfigs: []staticConfig{{Targets: targets}},
	}}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding Prometheus configuration: %w", err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("writing Prometheus configuration: %w", err)
	}
	return nil
}

// promDuration writes d in milliseconds: Prometheus durations have no
// fractions, so "1.5s" would not parse.
func promDuration(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }
