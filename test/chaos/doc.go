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
// A seeded random walk of the ordinary actions of test/scenario (templates,
// steering values, pauses, rollbacks, nodes and pods failing, settings)
// plays on nodes of its own under the monitor; the first broken promise
// stops it with the seed and the actions played, and after its last action
// every change must end within its deadline. Actions the environment
// cannot play (analysis verdicts without a Prometheus, a handover without
// a DaemonSet controller, a kubelet holding pods) are skipped with the
// reason in the log.
//
// `go test ./test/chaos/` runs a short form; CHAOS=full (`make chaos`) runs
// the full counts on 500 nodes. CHAOS_REPORT names a file for the report as
// JSON. CHAOS_SEED replays a run's random choices: the kill moments and the
// walk's actions exactly; the faults follow the order the manager's
// requests come in, which its concurrency changes from run to run.
package chaos
