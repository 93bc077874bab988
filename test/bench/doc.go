// Package bench measures the manager against its peers, the native
// DaemonSet controller of kube-controller-manager and OpenKruise's Advanced
// DaemonSet controller (kruiseproc.go says how its manager runs without its
// webhook), on a simulated cluster whose pods really go Running and Ready.
// Each runs as a process of its own with the same client rate limit; each
// scenario runs several times, the peers and ours in turn, and the medians
// are printed as a table and written as JSON.
//
// What a run records, and where from:
//
//   - wall time, from the write that starts the rollout to a status that
//     says every pod runs the new template and is available;
//   - the requests the controller sent, counted in its own process: ours
//     by verb and resource (extendeddaemonset_api_requests_total),
//     kube-controller-manager's and Kruise's manager's by HTTP method
//     (rest_client_requests_total);
//   - the same requests in the API server's audit log, by user agent, which
//     is where the peers' writes by resource come from;
//   - the process's peak RSS (VmHWM, reset before the run) and CPU time;
//   - the quantiles of controller-runtime's reconcile time histogram, and
//     of our replica set passes without their writes, which wait on the
//     client's rate limit (extendeddaemonset_replicaset_decision_seconds).
//
// kube-controller-manager runs its DaemonSet controller for the whole
// benchmark, our side's runs included. In the workloadref scenario it is
// half of our side: the agent is a DaemonSet updated OnDelete, an
// ExtendedDaemonSet's workloadRef names it, our manager deletes its pods
// within the budget and the DaemonSet controller recreates them at the new
// image. Its native counterpart is the update scenario's DaemonSet rolling
// itself, the same change at the same QPS. Each client has the rate limit
// to itself, so our side there may spend up to twice the native side's
// budget; ours' figures are the manager's alone, and two rows add the
// DaemonSet controller's requests and writes, from the audit log, to them
// (the native side's are its own). The DaemonSet controller's CPU and RSS
// stay out of ours' figures. workloadref-canary, ours only, is the same
// through a canary on 1% of the nodes. The default BENCH_SCENARIOS leaves
// both out: workloadref's native side repeats update's, and with them each
// run of the default list would take three more rollouts per QPS.
//
// Nothing here asserts speed: the smoke test only checks that every figure
// was collected. `make bench` runs the benchmark with the BENCH_*
// variables of config.go.
package bench
