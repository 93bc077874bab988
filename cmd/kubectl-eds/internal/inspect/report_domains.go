package inspect

// domains lists the domains of a zone-by-zone rolling update, in the order
// they are updated, from the active replica set's status.
func (r *report) domains() {
	topology := r.s.eds.Spec.Strategy.RollingUpdate.Topology
	active := r.s.replicaSet(r.s.eds.Status.ActiveReplicaSet)
	if topology == nil || active == nil || len(active.Status.Domains) == 0 {
		return
	}
	r.line("Domains: by %s, %s", topology.Key, orNone(string(topology.Order)))
	r.line("  DOMAIN\tSTATE\tUP-TO-DATE\tUNAVAILABLE")
	for _, d := range active.Status.Domains {
		r.line("  %s\t%s\t%d/%d\t%d", d.Name, d.State, d.UpToDate, d.Desired, d.Unavailable)
	}
}
