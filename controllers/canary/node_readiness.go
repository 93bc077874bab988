package canary

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// canaryNodes are the recorded canary nodes st keeps, and the verdict on
// the canary for a node it may have broken. A node that is no candidate
// any more (gone, relabelled) is not kept, nor is a node in maintenance:
// it is judged nothing on (its agent may be evicted, its other pods go),
// so SelectNodes replaces it as it replaces a vanished node. A canary node that is not
// Ready is judged nothing on: its pod is not running, or no longer
// reported. When it went NotReady after the canary pod started there, the
// canary may be the cause (an agent can break its node): autoFail fails
// the canary, else autoPause pauses it (until a person unpauses it), and
// the node is kept so the canary stays where it broke. Otherwise, or when
// the node was NotReady before the canary ran there, it is dropped, and
// SelectNodes picks a healthy replacement. A canary a person paused is
// held where it is.
func canaryNodes(in Input, st *v1alpha1.CanaryStatus) ([]string, Verdict) {
	if pausedByUser(in) {
		return st.Nodes, Verdict{}
	}
	byName := make(map[string]*Candidate, len(in.Candidates))
	for i := range in.Candidates {
		byName[in.Candidates[i].Name] = &in.Candidates[i]
	}
	var kept []string
	var verdict Verdict
	for _, name := range st.Nodes {
		c := byName[name]
		switch {
		case c == nil, c.Maintenance != "":
			continue
		case !c.NotReady:
			kept = append(kept, name)
			continue
		}
		started := podStarted(in.Pods, name)
		if started.IsZero() || c.NotReadySince.IsZero() || c.NotReadySince.Before(started) {
			continue
		}
		v := nodeVerdict(in, st, name, c.NotReadySince)
		if v.Action == Continue {
			continue
		}
		kept = append(kept, name)
		if v.Action > verdict.Action {
			verdict = v
		}
	}
	if verdict.Action == Continue && st.Paused && st.Reason == v1alpha1.ReasonCanaryNodeNotReady {
		// The node came back, yet what broke it may break it again: the
		// pause waits for a person, as autoPause's other pauses do.
		if nodeAction(in, st) == Pause {
			verdict = Verdict{Pause, st.Reason, st.Message}
		}
	}
	return kept, verdict
}

// nodeVerdict is the canary's verdict when its node went NotReady at since,
// after the canary pod started there.
func nodeVerdict(in Input, st *v1alpha1.CanaryStatus, node string, since time.Time) Verdict {
	msg := fmt.Sprintf("canary node %s went NotReady at %s, after the canary pod started there", node, since.UTC().Format(time.RFC3339))
	switch nodeAction(in, st) {
	case Fail:
		return Verdict{Fail, v1alpha1.ReasonCanaryNodeNotReady, msg}
	case Pause:
		return Verdict{Pause, v1alpha1.ReasonCanaryNodeNotReady, msg + "; unpause the canary to run it on another node instead"}
	}
	return Verdict{}
}

// nodeAction is what a canary node gone NotReady calls for: failing with
// autoFail, else pausing with autoPause unless a person unpaused the
// canary, else going on without the node.
func nodeAction(in Input, st *v1alpha1.CanaryStatus) Action {
	checks := restartChecksOf(in.Strategy)
	if checks.fail != nil {
		return Fail
	}
	if checks.pause != nil && !Steered(SteerUnpause, in.Strategy, in.Annotations, st) {
		return Pause
	}
	return Continue
}

// podStarted is when the kubelet of node first started a canary pod,
// zero when none started there.
func podStarted(pods []*corev1.Pod, node string) time.Time {
	var first time.Time
	for _, pod := range pods {
		if s := pod.Status.StartTime; s != nil && placement.TargetNode(pod) == node && (first.IsZero() || s.Time.Before(first)) {
			first = s.Time
		}
	}
	return first
}

// turnedOver says whether the canary's nodes changed in a way that needs
// judging anew: a recorded node lost (gone, or dropped as NotReady), or a
// node added (a replacement, a first node found, a canary grown with its
// cluster). Nodes let go because a shrunk cluster asks for fewer were
// judged all along.
func turnedOver(previous, kept, chosen []string) bool {
	return !subset(previous, kept) || !subset(chosen, previous)
}

// subset says whether every node of a is in b.
func subset(a, b []string) bool {
	in := make(map[string]bool, len(b))
	for _, n := range b {
		in[n] = true
	}
	for _, n := range a {
		if !in[n] {
			return false
		}
	}
	return true
}

// waitingForNodes says why the canary has fewer nodes (have) than it
// needs: no node matches its nodeSelector, or the candidates are not
// healthy enough to start a canary on.
func waitingForNodes(in Input, have, need int) string {
	if len(in.Candidates) == 0 {
		return fmt.Sprintf("none of the %d nodes the template runs on matches the canary nodeSelector", in.Desired)
	}
	why := fmt.Sprintf("every other of the %d candidate nodes is not Ready, cordoned, being drained or going away", len(in.Candidates))
	if have == 0 {
		why = fmt.Sprintf("every one of the %d candidate nodes is not Ready, cordoned, being drained or going away", len(in.Candidates))
	}
	return fmt.Sprintf("%d of %d canary nodes: %s", have, need, why)
}

// WaitingForNodesPastDeadline says whether the canary c has waited for
// nodes to run on for longer than deadline at now.
func WaitingForNodesPastDeadline(c *v1alpha1.CanaryStatus, deadline time.Duration, now time.Time) bool {
	if c.Reason != ReasonWaitingForNodes || c.Paused || c.Failed || deadline <= 0 {
		return false
	}
	return !now.Before(waitingForNodesSince(c).Add(deadline))
}

// waitingForNodesSince is when the canary c last found a node, or started:
// the start of its current step, which starts over when its nodes change.
func waitingForNodesSince(c *v1alpha1.CanaryStatus) time.Time {
	switch {
	case c.StepStartedAt != nil:
		return c.StepStartedAt.Time
	case c.StartedAt != nil:
		return c.StartedAt.Time
	}
	return time.Time{}
}

// nodesRequeue is when a canary waiting for nodes looks again: node
// changes do not all reach the ExtendedDaemonSet, so it polls, and it
// wakes when its progress deadline passes.
func nodesRequeue(in Input, st *v1alpha1.CanaryStatus) time.Duration {
	if in.ProgressDeadline <= 0 {
		return nodesPoll
	}
	if left := waitingForNodesSince(st).Add(in.ProgressDeadline).Sub(in.Now); left > 0 {
		return min(nodesPoll, left)
	}
	return nodesPoll
}
