// Package chaos runs the manager, built from cmd/manager, as a subprocess
// against a simulated cluster and breaks what a real cluster breaks: the
// manager is killed at random moments, its API requests fail, time out or
// succeed without an answer, and its leader dies mid-canary. Every rollout
// must still complete with no safety rule broken, no pod created twice for
// a node and no transition told twice. The manager authenticates as the
// ServiceAccount that config/default binds, so a request its roles refuse
// fails the suite too.
//
// `go test ./test/chaos/` runs a short form; CHAOS=full (`make chaos`) runs
// the full counts on 500 nodes. CHAOS_SEED replays a run's random choices,
// and CHAOS_REPORT names a file for the report as JSON.
package chaos
