package prometheus

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

// The configuration the harness writes is one promtool accepts, with the
// scrape timeout below the interval.
func TestConfigPassesPromtool(t *testing.T) {
	testenv.RequireAssets(t)
	promtool, err := PromtoolPath()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "prometheus.yml")
	if err := writeConfig(path, Options{ScrapeInterval: 1500 * time.Millisecond, Targets: []string{"127.0.0.1:9100"}}); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "check", "config", path).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check config: %v\n%s", err, out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"scrape_interval": "1500ms"`, `"scrape_timeout": "1200ms"`, `"honor_labels": true`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("configuration lacks %s:\n%s", want, data)
		}
	}
}

func TestConfigRejectsFractionalMilliseconds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prometheus.yml")
	if err := writeConfig(path, Options{ScrapeInterval: 1500 * time.Microsecond}); err == nil {
		t.Fatal("a 1.5ms scrape interval was accepted")
	}
}
