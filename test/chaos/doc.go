// Package chaos runs the manager, built from cmd/manager, as a subprocess
// against a simulated cluster and breaks what a real cluster breaks: the
// manager is killed at random moments, its API requests fail, time out or
// are carried out without an answer while its watches lag, and its leader
// dies mid-canary. Every rollout must still complete with no safety rule
// broken (test/invariants), no pod created twice for a node and no
// transition told twice. The manager authenticates as the ServiceAccount
// that config/default binds, so a request its roles refuse fails the suite
// too.
//
// `go test ./test/chaos/` runs a short form; CHAOS=full (`make chaos`) runs
// the full counts on 500 nodes. CHAOS_REPORT names a file for the report as
// JSON. CHAOS_SEED replays a run's random choices: the kill moments
// exactly; the faults follow the order the manager's requests come in,
// which its concurrency changes from run to run.
package chaos
