package inspect

// domains lists the domains of a zone-by-zone rolling update, in the order
// they are updated, with the verdict of each one's bake analysis: from the
// ExtendedDaemonSet's status, or the active replica set's from a controller
// that does not copy them.
func (r *report) domains() {
	topology := r.s.eds.Spec.Strategy.RollingUpdate.Topology
	if topology == nil {
		return
	}
	domains := r.s.eds.Status.Domains
	if active := r.s.replicaSet(r.s.eds.Status.ActiveReplicaSet); len(domains) == 0 && active != nil {
		domains = active.Status.Domains
	}
	if len(domains) == 0 {
		return
	}
	r.line("Domains: by %s, %s", topology.Key, orNone(string(topology.Order)))
	r.line("  DOMAIN\tSTATE\tUP-TO-DATE\tUNAVAILABLE\tBAKE ANALYSIS")
	for _, d := range domains {
		r.line("  %s\t%s\t%d/%d\t%d\t%s", d.Name, d.State, d.UpToDate, d.Desired, d.Unavailable, orDash(string(d.Analysis)))
	}
}

// bakeAnalysis shows the analysis judging the bake of the current domain,
// or that halted the rollout.
func (r *report) bakeAnalysis() {
	b := r.s.eds.Status.Bake
	if b == nil || b.Analysis == nil || b.ReplicaSet != r.s.eds.Status.ActiveReplicaSet || b.PassedThrough == b.Domain {
		return
	}
	r.analysisTable("Bake analysis of "+b.Domain, b.Analysis)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
