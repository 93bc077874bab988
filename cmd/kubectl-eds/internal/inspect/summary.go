package inspect

import (
	"fmt"
	"strings"
)

// summary is one line of where the rollout stands, without ages: watched
// on a screen that is not a terminal, a line is written only when it
// changes.
func summary(s *snapshot) string {
	eds := s.eds
	st := &eds.Status
	if st.ObservedGeneration != eds.Generation {
		return fmt.Sprintf("waiting for the controller to see generation %d", eds.Generation)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d/%d up to date, %d/%d available", stateText(eds), st.UpToDate, st.Desired, st.Available, st.Desired)
	if c := st.Canary; c != nil {
		var ready int
		var restarted int32
		for _, node := range c.Nodes {
			// Nodes, not pods: a duplicate being deleted is not a node more.
			nodeReady := false
			for _, pod := range s.podsOn(node) {
				if podRole(eds, pod.ReplicaSet) == roleCanary {
					restarted += restarts(pod.Pod)
					nodeReady = nodeReady || podReady(pod.Pod)
				}
			}
			if nodeReady {
				ready++
			}
		}
		fmt.Fprintf(&b, "; canary %s: %d/%d ready, %d restarts", c.ReplicaSet, ready, len(c.Nodes), restarted)
		if c.Analysis != nil {
			fmt.Fprintf(&b, ", analysis %s", orNone(string(c.Analysis.Phase)))
		}
	}
	return b.String()
}
