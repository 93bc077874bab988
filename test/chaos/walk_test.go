package chaos

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/invariants"
	actions "github.com/extendeddaemonset/extendeddaemonset/test/scenario"
)

// Walk settings. The durations are short so that a canary, a step, a bake
// and a progress deadline all play out between a walk's actions, and the
// unresponsive grace so that a node going NotReady does too.
const (
	walkCanary          = 10 * time.Second
	walkStep            = 5 * time.Second
	walkNoRestarts      = 3 * time.Second
	walkBake            = 5 * time.Second
	walkProgressSeconds = 20
	walkUnresponsive    = "--unresponsive-node-grace=15s"
	walkZones           = 3
	// walkZoneLabel is the topology key of the zone-by-zone setting.
	walkZoneLabel = corev1.LabelTopologyZone
)

// A seeded random walk of ordinary actions (test/scenario) on the
// simulated cluster, under the invariant monitor: templates applied (new,
// earlier, the one whose canary failed), steering values for the running
// canary, an earlier replica set or a made-up one, through annotations and
// spec twins, pauses, freezes, rollbacks, nodes added, removed, cordoned,
// NotReady and back, pods failing, crash-looping, evicted and made ready,
// time passing, settings turned on and off. The first broken promise ends
// the walk with the seed and the actions played; after the last action the
// walk waits until every change has ended (Ready, Stalled or waiting for a
// person) or the monitor says one missed its deadline.
//
// The ExtendedDaemonSet runs on nodes of the walk's own, so that the other
// scenarios' nodes stay as they were.
func TestRandomWalk(t *testing.T) {
	s := newScenario(t, "walk")
	w := newWalker(s)
	s.startManager("manager", s.env.kubeconfig, walkUnresponsive)
	s.waitLeader("")
	w.addNodes(prof.walkNodes)
	w.create()
	w.waitReady()

	seq := actions.Draw(s.rng, prof.walkSteps, walkOptions())
	t.Logf("walk of %d actions, seed %d (replay: CHAOS_SEED=%d go test ./test/chaos/ -run 'TestRandomWalk$'):\n%s",
		len(seq), seed, seed, actions.Story(seq))
	start := time.Now()
	for _, a := range seq {
		w.play(a)
		w.checkpoint()
	}
	last := time.Now()
	w.waitEnded(w.tail())
	s.result.Converge = time.Since(last)
	w.log = append(w.log, fmt.Sprintf("     every change ended %s after the last action", s.result.Converge.Round(time.Second)))
	t.Logf("walk played in %s:\n%s", time.Since(start).Round(time.Second), strings.Join(w.log, "\n"))
	w.verify()
}

// walkOptions draw what this environment can play, with time passing more
// often than by default so that canaries, steps and deadlines run out
// between actions.
func walkOptions() actions.Options {
	return actions.Options{
		MaxWait: prof.walkMaxWait, Zones: walkZones,
		Weights:  map[actions.Kind]int{actions.AnalysisVerdict: 0, actions.HoldKubelet: 0, actions.Wait: 30},
		Settings: []actions.Setting{actions.CanarySteps, actions.TopologyZones, actions.InPlace, actions.CanaryStrategy, actions.ManualValidation},
	}
}

// walker plays a sequence of actions on the walk's ExtendedDaemonSet.
type walker struct {
	s    *scenario
	name string
	// nodes are the walk's nodes, in the order they were added; gone ones
	// are removed.
	nodes []string
	added int
	// log is the played sequence, each action with what came of it.
	log    []string
	played int
	// tokens numbers the retry tokens and made-up names.
	tokens int
	// crashLoops stop the pods' crash loops.
	crashLoops map[string]context.CancelFunc
	// stopped are the nodes whose kubelet the walk stopped: nothing
	// reports their pods' status until it is back.
	stopped map[string]bool
}

func newWalker(s *scenario) *walker {
	w := &walker{s: s, name: "walk", crashLoops: map[string]context.CancelFunc{}, stopped: map[string]bool{}}
	s.t.Cleanup(w.cleanUp)
	return w
}

// groupLabel selects the walk's nodes.
const groupLabel = "chaos.extendeddaemonset.io/walk"

func walkImage(template int) string { return fmt.Sprintf("registry.example/walk:t%d", template) }

// create creates the walk's ExtendedDaemonSet on template 0: a canary of
// one node, its autoPause and autoFail on, a short progress deadline.
func (w *walker) create() {
	labels := map[string]string{"app": w.name}
	eds := &v1alpha1.ExtendedDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: w.name, Namespace: w.s.ns},
		Spec: v1alpha1.ExtendedDaemonSetSpec{
			Selector: &v1alpha1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{groupLabel: w.s.ns},
					Containers:   []corev1.Container{{Name: "agent", Image: walkImage(0)}},
				},
			},
			ProgressDeadlineSeconds: ptr.To(int32(walkProgressSeconds)),
			Strategy: v1alpha1.ExtendedDaemonSetStrategy{
				RollingUpdate: v1alpha1.RollingUpdateStrategy{MaxUnavailable: ptr.To(intstr.FromInt32(1))},
				Canary:        walkCanaryStrategy(),
			},
		},
	}
	w.s.g.Expect(w.s.env.client.Create(w.s.ctx, eds)).To(gomega.Succeed())
}

// walkCanaryStrategy is the canary the walk starts with, and the one the
// canary setting turns back on.
func walkCanaryStrategy() *v1alpha1.CanaryStrategy {
	return &v1alpha1.CanaryStrategy{
		Replicas:           ptr.To(intstr.FromInt32(1)),
		Duration:           &metav1.Duration{Duration: walkCanary},
		NoRestartsDuration: &metav1.Duration{Duration: walkNoRestarts},
		AutoPause:          &v1alpha1.CanaryAutoPause{Enabled: ptr.To(true), MaxRestarts: ptr.To(int32(2))},
		AutoFail:           &v1alpha1.CanaryAutoFail{Enabled: ptr.To(true), MaxRestarts: ptr.To(int32(5))},
	}
}

// play plays one action and logs what came of it.
func (w *walker) play(a actions.Action) {
	w.played++
	w.s.result.Actions = w.played
	outcome := w.act(a)
	if strings.Contains(outcome, "skipped: ") {
		w.s.result.Skipped++
	}
	line := fmt.Sprintf("%3d. %s", w.played, a)
	if outcome != "" {
		line += ": " + outcome
	}
	w.log = append(w.log, line)
}

// act plays a and says what came of it: what it acted on, or why it was
// skipped.
func (w *walker) act(a actions.Action) string {
	switch a.Kind {
	case actions.ApplyTemplate:
		return w.applyTemplate(a)
	case actions.Steer:
		return w.steer(a)
	case actions.PauseRollingUpdate, actions.UnpauseRollingUpdate, actions.Freeze, actions.Unfreeze, actions.PauseCanary, actions.UnpauseCanary:
		return w.pauseOrFreeze(a)
	case actions.Rollback:
		return w.rollback(a.Index)
	case actions.AddNode:
		return w.addNode(a.Zone)
	case actions.RemoveNode:
		return w.onNode(a.Index, w.removeNode)
	case actions.CordonNode, actions.UncordonNode:
		return w.onNode(a.Index, func(node string) string { return w.cordon(node, a.Kind == actions.CordonNode) })
	case actions.NodeNotReady:
		return w.onNode(a.Index, w.nodeNotReady)
	case actions.NodeReady:
		return w.onNode(a.Index, w.nodeReady)
	case actions.PodFails, actions.PodCrashLoops, actions.PodEvicted, actions.PodReady:
		return w.onPod(a)
	case actions.AnalysisVerdict:
		return "skipped: the chaos environment has no Prometheus to give verdicts"
	case actions.Wait:
		w.sleep(a.Delay)
		return ""
	case actions.Toggle:
		return w.toggle(a.Setting, a.On)
	case actions.HoldKubelet:
		return "skipped: kwok starts every pod of a node it manages, with no way to hold some back"
	}
	return "skipped: an action this walk does not know"
}

// sleep waits d, ending the walk at once on a broken promise.
func (w *walker) sleep(d time.Duration) {
	deadline := time.Now().Add(d)
	for left := time.Until(deadline); left > 0; left = time.Until(deadline) {
		w.checkpoint()
		w.s.sleep(min(left, 250*time.Millisecond))
	}
}

// checkpoint fails the walk on the first promise broken so far.
func (w *walker) checkpoint() {
	w.s.t.Helper()
	select {
	case v := <-w.s.violations:
		w.fail(fmt.Sprintf("invariant broken: %s", v))
	default:
	}
}

// fail ends the walk with the seed, the actions played and what the
// monitor saw.
func (w *walker) fail(why string) {
	w.s.t.Helper()
	w.failWith(why, w.s.monitor.Report())
}

func (w *walker) failWith(why string, report invariants.Report) {
	w.s.t.Helper()
	w.s.t.Fatalf("%s\nseed %d (replay: CHAOS_SEED=%d go test ./test/chaos/ -run 'TestRandomWalk$'), after %d actions:\n%s\nwhat the monitor saw:\n%s",
		why, seed, seed, w.played, strings.Join(w.log, "\n"), report)
}

// tail bounds the wait for every change to end after the last action:
// the longest the monitor allows, and a margin for it to say so.
func (w *walker) tail() time.Duration {
	return walkProgressSeconds*time.Second + walkCanary + walkNoRestarts + 3*walkStep + walkBake + invariants.DefaultDeadlineSlack + time.Minute
}

// waitReady waits until the walk's ExtendedDaemonSet first is Ready at
// its generation, so that the walk starts from a rollout done.
func (w *walker) waitReady() {
	w.s.t.Helper()
	deadline := time.Now().Add(prof.rolloutTimeout)
	for {
		w.checkpoint()
		eds := w.get()
		if eds.Status.ObservedGeneration == eds.Generation && apimeta.IsStatusConditionTrue(eds.Status.Conditions, v1alpha1.ReadyCondition) {
			return
		}
		if time.Now().After(deadline) {
			w.fail(fmt.Sprintf("the walk's ExtendedDaemonSet is not Ready %s after its creation: %v", prof.rolloutTimeout, eds.Status.Conditions))
		}
		w.s.sleep(pollInterval)
	}
}

// waitEnded waits until the monitor knows of no change still going on,
// failing on a broken promise, or at timeout.
func (w *walker) waitEnded(timeout time.Duration) {
	w.s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		w.checkpoint()
		pending := w.s.monitor.Unsettled()
		if len(pending) == 0 {
			return
		}
		if time.Now().After(deadline) {
			w.fail(fmt.Sprintf("changes still going on %s after the walk's last action: %s", timeout, strings.Join(pending, "; ")))
		}
		w.s.sleep(pollInterval)
	}
}

// verify stops the monitor and checks what the walk promises: no
// violation, no request the manager's roles refused. Pods created twice
// for a node and transitions told twice are no failures here: evictions
// and templates applied again make both legitimately.
func (w *walker) verify() {
	w.s.t.Helper()
	seen := w.s.monitor.Stop()
	w.s.monitor = nil
	forbidden := w.s.forbidden()
	w.s.result.Violations, w.s.result.Forbidden, w.s.result.ManagerExits = len(seen.Violations), len(forbidden), len(w.s.exits())
	if len(seen.Violations) > 0 {
		w.failWith(fmt.Sprintf("invariant broken: %s", seen.Violations[0]), seen)
	}
	w.s.g.Expect(seen.PodsCreated).NotTo(gomega.BeEmpty(), "the monitor saw no pod created: it checked nothing")
	w.s.g.Expect(forbidden).To(gomega.BeEmpty(), "requests the manager's roles refused")
}
