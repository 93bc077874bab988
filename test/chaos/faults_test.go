package chaos

import (
	"regexp"
	"slices"
	"testing"
	"time"
)

// podCreation matches a pod creation the API server carried out, in
// ProxyStats.Lost.
var podCreation = regexp.MustCompile(`^POST /api/v1/namespaces/[^/]+/pods: 201$`)

// A rollout with a canary completes while a share of the manager's
// requests fail, are throttled, conflict, time out, or are carried out
// with their answer lost, and its watches lag. The lost answers are the
// hard part, and the lag makes them harder: a pod created whose creation
// the manager saw fail must not get a twin, and a status written whose
// write the manager saw fail must not tell its transition twice, even
// before the manager's cache shows the write.
func TestAPIFaults(t *testing.T) {
	s := newScenario(t, "faults")
	proxy, kubeconfig := s.startProxy()
	// The default lease timings, as deployed: their renewal retries ride
	// out the faults.
	s.startManager("manager", kubeconfig)
	s.waitLeader("")
	eds := s.agent("v1", prof.canary)
	s.waitRolledOut(eds, "v1")

	before := proxy.Stats()
	proxy.SetRate(prof.faultRate)
	proxy.SetWatchLag(prof.watchLag)
	s.result.WatchLag = prof.watchLag
	start := time.Now()
	s.setVersion(eds, "v2")
	s.waitRolledOut(eds, "v2")
	s.result.Converge = time.Since(start)
	proxy.SetRate(0)
	proxy.SetWatchLag(0)
	stats := proxy.Stats()
	s.result.Requests, s.result.Faults = stats.Requests-before.Requests, stats.Faults
	t.Logf("faults in %d requests: %v", s.result.Requests, stats.Faults)
	t.Logf("writes done whose answer was lost: %d, pod creations among them: %d",
		len(stats.Lost), len(slices.DeleteFunc(stats.Lost, func(w string) bool { return !podCreation.MatchString(w) })))
	s.verify()
}
