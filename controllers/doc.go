// Package controllers holds one reconciler per kind of the
// extendeddaemonset.io API: each observes from the cache, plans with a pure
// function, acts, and writes status once.
//
// The ExtendedDaemonSet reconciler keeps one replica set per pod template
// and decides which is active and which runs as a canary: it observes the
// canary's pods and nodes and takes the measurements that are due, decides
// with canary.Step, a pure function, and records the decision in the
// status. Status is computed in one place (extendeddaemonset_status.go)
// and written on every path: a spec the controller cannot use (stalling
// errors) stalls the object, any other error shows as ReconcileFailed and
// is retried; then a canary, a failed bake, and the active replica set
// decide, in that order (extendedDaemonSetProgress). Events and metrics
// are told once the status patch succeeded, so a retried reconcile tells
// nothing twice. With Options.EventsAddr every event also goes to Flux's
// notification-controller (internal/fluxevents, notifications.go), with
// the template's revision and a token naming the transition. The condition contract that Flux and Argo CD read lives in
// internal/outcome. With a canary analysis and a zone rollout that bakes, it
// also judges each domain's bake with the same analysis (bake.Step decides,
// the measuring code is the canary's) and records in status.bake the last
// domain whose bake passed, which the active replica set's planner reads.
//
// A nodeHealth metric, of the canary or of a bake, observes nodes
// (extendeddaemonset_nodehealth.go): canary.HealthNodesOf, a pure
// function, picks the nodes judged and their same-zone baseline from the
// cached nodes and the ExtendedDaemonSet's pods, and the pods of other
// workloads on each are listed around the cache, which holds only ours.
//
// The replica set reconciler runs the pods of one replica set with the
// rollout planner. What a pass states of each node (the rollout.Node and
// the pods there) is kept from pass to pass in a view
// (replicaset_view.go, replicaset_views.go) with the planner's own state
// (rollout.State): the pod and node watch handlers record in a journal
// (internal/store) which nodes changed, and a pass states again only
// those, the nodes its pending writes touch, and the nodes not Ready
// (whose unresponsiveness comes with time alone), so a pod event costs
// work for one node, not for the cluster. A view is stated afresh on the
// first pass, when what it depends on changes (template, role, canary
// nodes), when the journal lost track, and every DefaultViewCheckInterval,
// when it is compared with what it had become and a difference is logged
// and counted (extendeddaemonset_replicaset_view_mismatches_total). A
// workload's or a migrated DaemonSet's pods, which the journal does not
// see, are stated afresh at every pass. The canary and the active replica
// set spend one budget:
// each plans knowing what the other spends on its nodes (spentElsewhere),
// and the reconciles of one ExtendedDaemonSet's replica sets are serialized
// so each sees the other's writes through the expectations. A pod write
// whose answer is lost (a timeout, a reset connection) is expected as if
// done, for a shorter while: the cache may show it late, and a second pod
// would go to the node meanwhile. Pods are named by the controller, so that
// a creation without answer is expected by name too. A replica set
// without progress past spec.progressDeadlineSeconds is Stalled, reason
// ProgressDeadlineExceeded, naming its stuck nodes; nodes not Ready past a
// grace period are left alone and do not count against the budget.
//
// An ExtendedDaemonSet whose workloadRef names an OnDelete DaemonSet keeps a
// replica set per revision of the DaemonSet's template
// (extendeddaemonset_workload.go) and takes the DaemonSet's pods for pods of
// the replica set of their revision. Its replica sets only delete pods, and
// only the one of the DaemonSet's current template does
// (replicaset_workload.go): the DaemonSet recreates every pod deleted, at
// that template. Every decision is the same pure one as for pods of its own.
//
// Each file is named for the reconciler it serves (extendeddaemonset_,
// replicaset_, setting_); setup*.go is what cmd/manager wires. What the
// reconcilers share lives under internal/: internal/store is what a pass
// sees (cache reads, indexes, expectations, watch predicates, settings),
// internal/outcome how it ends (conditions, stalling errors, the status
// patch and its pacing). Neither imports this package, rollout, canary,
// bake or analysis; the decision packages (rollout, canary, bake,
// placement, overrides) hold every decision as pure functions and import
// neither internal package.
package controllers

// Permissions of the manager, from which config/rbac/role.yaml is
// generated: exactly the calls the code makes, cluster-wide. Reads go
// through the cache (list, watch) except the few noted; leader election has
// its own namespaced Role (config/rbac/leader_election_role.yaml).
//
// ExtendedDaemonSets are also read around the cache while a canary may run
// or a bake is judged, and so is an active replica set missing from the
// cache; replica sets are created and pruned, never changed; statuses are
// merge-patched. Owner references that block deletion need update on the
// owners' finalizers.
// +kubebuilder:rbac:groups=extendeddaemonset.io,resources=extendeddaemonsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=extendeddaemonset.io,resources=extendeddaemonsetreplicasets,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=extendeddaemonset.io,resources=extendeddaemonsetsettings,verbs=list;watch
// +kubebuilder:rbac:groups=extendeddaemonset.io,resources=extendeddaemonsets/status;extendeddaemonsetreplicasets/status;extendeddaemonsetsettings/status,verbs=patch
// +kubebuilder:rbac:groups=extendeddaemonset.io,resources=extendeddaemonsets/finalizers;extendeddaemonsetreplicasets/finalizers,verbs=update
//
// Pods are created and deleted, and patched by in-place updates (their
// images, labels and owner, and the in-place readiness gate's condition in
// their status); the pods of a DaemonSet being migrated from are listed
// around the cache, and so is the DaemonSet read, and so are the pods of
// each node a nodeHealth metric judges or compares with (by
// spec.nodeName, in every namespace). DaemonSets are watched
// for those a workloadRef names; their pods and ControllerRevisions are
// listed around the cache, and the DaemonSet itself is never written.
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;create;delete;patch
// +kubebuilder:rbac:groups="",resources=pods/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=list;watch
// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=list
//
// One named Secret per analysis, read around the cache: listing or watching
// every Secret of the cluster is neither needed nor wanted.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
//
// The controllers' event recorder writes events.k8s.io events.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
//
// The metrics endpoint authenticates and authorizes its callers.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
