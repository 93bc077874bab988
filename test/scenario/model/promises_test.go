package model

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/test/scenario"
)

// Each promise is broken on purpose, behind the controller's back, and
// must be caught: a check that cannot fail proves nothing.

func rolledOut(t *testing.T, cfg Config) *Cluster {
	t.Helper()
	c := New(cfg)
	if got := c.ended(); got != "Ready" {
		t.Fatalf("the starting cluster is not rolled out: %q, %s", got, c.describe())
	}
	return c
}

func wantViolation(t *testing.T, c *Cluster, kind Kind) {
	t.Helper()
	for _, v := range c.violations {
		if v.Kind == kind {
			t.Logf("caught: %s", v)
			return
		}
	}
	t.Fatalf("no %s violation, got %v", kind, c.violations)
}

func agentPodOn(c *Cluster, node string) *corev1.Pod {
	for _, p := range c.edsPods() {
		if p.Spec.NodeName == node && p.DeletionTimestamp == nil {
			return p
		}
	}
	return nil
}

func TestBudgetCatchesTwoNodesTakenDown(t *testing.T) {
	c := rolledOut(t, Config{})
	for _, n := range c.nodes[:2] {
		p := agentPodOn(c, n.Name)
		c.deleting(p, "test")
		p.DeletionTimestamp = &metav1.Time{Time: c.now}
	}
	c.check()
	wantViolation(t, c, Budget)
}

func TestBudgetForgivesWhatPeopleDid(t *testing.T) {
	c := rolledOut(t, Config{})
	for i := range 3 {
		c.Do(scenario.Action{Kind: scenario.PodEvicted, Pod: scenario.AgentPod, Index: i})
	}
	if v := c.violations; len(v) > 0 {
		t.Fatalf("evictions counted against the controller: %v", v)
	}
}

func TestDomainBudgetCatchesTwoNodesOfAZone(t *testing.T) {
	c := rolledOut(t, Config{Topology: true, MaxUnavailable: 3})
	for _, n := range []int{0, 3} { // zone-0 both
		p := agentPodOn(c, c.nodes[n].Name)
		c.deleting(p, "test")
		p.DeletionTimestamp = &metav1.Time{Time: c.now}
	}
	c.check()
	wantViolation(t, c, DomainBudget)
}

func TestTwoAgentsCatchesASecondPod(t *testing.T) {
	c := rolledOut(t, Config{})
	p := agentPodOn(c, c.nodes[0].Name).DeepCopy()
	p.Name += "-twin"
	c.pods[p.Name] = p
	c.check()
	wantViolation(t, c, TwoAgents)
}

func TestPromotionCatchesAnActiveSwitchWithoutCanary(t *testing.T) {
	c := rolledOut(t, Config{})
	c.Do(scenario.Action{Kind: scenario.ApplyTemplate, Template: 1})
	before := c.eds.Status.DeepCopy()
	c.eds.Status.ActiveReplicaSet, c.eds.Status.Canary = c.currentName(), nil
	c.afterEDSPass(before, canary.Promoted)
	wantViolation(t, c, Promotion)
}

func TestPromotionCatchesACanaryCutShort(t *testing.T) {
	c := rolledOut(t, Config{})
	c.Do(scenario.Action{Kind: scenario.ApplyTemplate, Template: 1})
	c.Do(scenario.Action{Kind: scenario.Wait, Delay: 20 * time.Second})
	before := c.eds.Status.DeepCopy()
	c.eds.Status.ActiveReplicaSet, c.eds.Status.Canary = c.currentName(), nil
	c.afterEDSPass(before, canary.Promoted)
	wantViolation(t, c, Promotion)
	if v := c.violations[0]; !strings.Contains(v.Detail, "ran 20s of its 1m0s") {
		t.Fatalf("the reason is not the duration: %s", v)
	}
}

func TestPromotionCatchesAReplacementNodeCutShort(t *testing.T) {
	c := rolledOut(t, Config{})
	c.Do(scenario.Action{Kind: scenario.ApplyTemplate, Template: 1})
	c.Do(scenario.Action{Kind: scenario.Wait, Delay: 50 * time.Second})
	// The canary moves to another node, behind the controller's back, and
	// is promoted once its own duration is over, 20s later.
	moved := c.eds.Status.Canary.DeepCopy()
	moved.Nodes = []string{c.nodes[1].Name}
	c.eds.Status.Canary = moved
	c.afterEDSPass(c.eds.Status.DeepCopy(), "")
	c.Do(scenario.Action{Kind: scenario.Wait, Delay: 20 * time.Second})
	before := c.eds.Status.DeepCopy()
	before.Canary = moved
	c.eds.Status.ActiveReplicaSet, c.eds.Status.Canary = c.currentName(), nil
	c.violations = nil
	c.afterEDSPass(before, canary.Promoted)
	wantViolation(t, c, Promotion)
	if v := c.violations[0]; !strings.Contains(v.Detail, "canary node "+c.nodes[1].Name+" ran 20") {
		t.Fatalf("the reason is not the replacement's duration: %s", v)
	}
}

func TestPromotionAcceptsAValidationOfThisInstance(t *testing.T) {
	c := rolledOut(t, Config{})
	c.Do(scenario.Action{Kind: scenario.ApplyTemplate, Template: 1})
	c.Do(scenario.Action{Kind: scenario.Steer, Steer: scenario.Validate, Target: scenario.RunningCanary})
	if v := c.violations; c.eds.Status.ActiveReplicaSet != c.currentName() || len(v) > 0 {
		t.Fatalf("a validated canary: %s, %v", c.describe(), v)
	}
}

func TestNeverEndsCatchesARolloutLeftRunning(t *testing.T) {
	c := rolledOut(t, Config{})
	c.Do(scenario.Action{Kind: scenario.ApplyTemplate, Template: 1})
	// The canary is kept running on purpose: its clock never starts.
	c.eds.Status.Canary.StartedAt = &metav1.Time{Time: c.now.Add(time.Hour)}
	c.instances = nil
	c.Play(nil, 5*time.Minute)
	wantViolation(t, c, NeverEnds)
}

func TestEveryRolloutOfTheModelEnds(t *testing.T) {
	for _, cfg := range []Config{{}, {Steps: true}, {Topology: true}, {Analysis: true}, {Topology: true, Analysis: true}, {MaxSurge: 1},
		{Workload: true}, {Workload: true, Steps: true}, {Workload: true, Topology: true, Analysis: true}} {
		c := rolledOut(t, cfg)
		c.Play([]scenario.Action{{Kind: scenario.ApplyTemplate, Template: 1}}, quiet)
		if v := c.violations; len(v) > 0 {
			t.Fatalf("%+v: %v", cfg, v)
		}
		if c.ended() != "Ready" || c.eds.Status.ActiveReplicaSet != c.currentName() {
			t.Fatalf("%+v: a plain template change did not roll out: %s", cfg, c.describe())
		}
	}
}

func TestSpecWrittenIsCaught(t *testing.T) {
	c := rolledOut(t, Config{})
	c.eds.Spec.MinReadySeconds = 5
	c.Do(scenario.Action{Kind: scenario.Wait, Delay: time.Second})
	wantViolation(t, c, SpecWritten)
}

func TestToldTwiceIsCaught(t *testing.T) {
	c := rolledOut(t, Config{})
	c.Do(scenario.Action{Kind: scenario.ApplyTemplate, Template: 1})
	before := c.eds.Status.DeepCopy()
	c.afterEDSPass(before, canary.Failed)
	c.afterEDSPass(before, canary.Failed)
	wantViolation(t, c, ToldTwice)
}

func TestNotOursIsCaught(t *testing.T) {
	c := rolledOut(t, Config{BarePod: true})
	c.deleting(c.pods["database"], "test")
	wantViolation(t, c, NotOurs)
}

func TestFailIgnoredIsCaught(t *testing.T) {
	c := rolledOut(t, Config{})
	c.Do(scenario.Action{Kind: scenario.ApplyTemplate, Template: 1})
	inst := c.running()
	c.checkFailed(failGiven{inst: inst, via: scenario.ViaAnnotation, value: canary.SteeringValue(c.eds.Status.Canary)})
	wantViolation(t, c, FailIgnored)
	c = rolledOut(t, Config{})
	c.Do(scenario.Action{Kind: scenario.ApplyTemplate, Template: 1})
	c.Do(scenario.Action{Kind: scenario.Steer, Steer: scenario.FailCanary, Via: scenario.ViaSpec})
	if v := c.violations; len(v) > 0 || c.eds.Status.Canary == nil || !c.eds.Status.Canary.Failed {
		t.Fatalf("a failed canary: %s %v", c.describe(), v)
	}
}

// With a workloadRef, a fail given while the pass waits for the
// DaemonSet's controller is checked at the first pass that decides, when
// its value is still there: obeyed, it holds; ignored, it is caught. (One
// replaced before any pass read it is the last story of
// TestStoriesThatOnceBrokeAPromise.)
func TestFailIgnoredIsCaughtAtThePassThatDecides(t *testing.T) {
	for _, ignored := range []bool{false, true} {
		c := rolledOut(t, Config{Workload: true})
		c.Do(scenario.Action{Kind: scenario.ApplyTemplate, Template: 1})
		c.Do(scenario.Action{Kind: scenario.Wait, Delay: 12 * time.Second})
		// Template 2, then 1 again: the DaemonSet's controller has not
		// recorded either yet, and the canary of template 1 runs on.
		c.Do(scenario.Action{Kind: scenario.ApplyTemplate, Template: 2})
		c.Do(scenario.Action{Kind: scenario.ApplyTemplate, Template: 1})
		inst := c.running()
		c.Do(scenario.Action{Kind: scenario.Steer, Steer: scenario.FailCanary, Target: scenario.RunningCanary, Via: scenario.ViaSpec})
		if inst == nil || c.edsErr == nil || c.failToCheck == nil || len(c.violations) > 0 {
			t.Fatalf("no fail waiting for a pass that decides: %s, %v", c.describe(), c.violations)
		}
		if ignored {
			// Behind the controller's back, the canary takes the value
			// for one left from before it started, which acts on nothing.
			c.eds.Status.Canary.LeftoverSteering = map[string]string{canary.SteerFail.Field(): c.twins.fail}
		}
		c.Do(scenario.Action{Kind: scenario.Wait, Delay: 5 * time.Second})
		if !ignored {
			if v := c.violations; len(v) > 0 || c.edsErr != nil || c.eds.Status.Canary == nil || !c.eds.Status.Canary.Failed {
				t.Fatalf("a fail read late: %s %v", c.describe(), v)
			}
			continue
		}
		wantViolation(t, c, FailIgnored)
	}
}

func TestFailedByNobodyIsCaught(t *testing.T) {
	c := rolledOut(t, Config{})
	c.Do(scenario.Action{Kind: scenario.ApplyTemplate, Template: 1})
	before := c.eds.Status.DeepCopy()
	cs := c.eds.Status.Canary
	cs.Failed, cs.Reason = true, canary.ReasonManual
	c.afterEDSPass(before, canary.Failed)
	wantViolation(t, c, FailedByNobody)
}

// Sequences that once broke a promise, scripted: each keeps them now.
func TestStoriesThatOnceBrokeAPromise(t *testing.T) {
	stories := []struct {
		name string
		cfg  Config
		seq  []scenario.Action
	}{
		// A retry handled while the canary ran ("spec/annotation") read as
		// a new one once the canary strategy was gone ("/annotation"): the
		// failed template became active on every node.
		{"retried twice, failed, canary turned off", Config{Workload: true}, []scenario.Action{
			{Kind: scenario.ApplyTemplate, Template: 1},
			{Kind: scenario.Wait, Delay: 30 * time.Second},
			{Kind: scenario.Steer, Steer: scenario.Retry, Target: scenario.RunningCanary, Via: scenario.ViaSpec},
			{Kind: scenario.Steer, Steer: scenario.Retry, Target: scenario.RunningCanary, Via: scenario.ViaAnnotation},
			{Kind: scenario.Steer, Steer: scenario.FailCanary, Target: scenario.RunningCanary, Via: scenario.ViaAnnotation},
			{Kind: scenario.Toggle, Setting: scenario.CanaryStrategy, On: false},
		}},
		{"validated, rolled back, applied again", Config{Analysis: true}, []scenario.Action{
			{Kind: scenario.ApplyTemplate, Template: 1},
			{Kind: scenario.Steer, Steer: scenario.Validate, Target: scenario.RunningCanary},
			{Kind: scenario.Rollback, Index: 1},
			{Kind: scenario.Wait, Delay: 4 * time.Minute},
			{Kind: scenario.ApplyTemplate, Template: 1},
		}},
		{"template change while waiting for the DaemonSet", Config{Handover: true}, []scenario.Action{
			{Kind: scenario.ApplyTemplate, Template: 1},
		}},
		{"handover with the selector unset", Config{Handover: true, SelectorUnset: true, BarePod: true}, []scenario.Action{
			{Kind: scenario.Toggle, Setting: scenario.Handover, On: false},
			{Kind: scenario.Wait, Delay: time.Minute},
		}},
		{"the canary's only node dies", Config{Untainted: true}, []scenario.Action{
			{Kind: scenario.ApplyTemplate, Template: 1},
			{Kind: scenario.Wait, Delay: 5 * time.Second},
			{Kind: scenario.NodeNotReady, Index: 0},
			{Kind: scenario.Wait, Delay: 6 * time.Minute},
		}},
		{"a crash-looping pod in a baked domain", Config{Nodes: 7, Topology: true, Analysis: true}, []scenario.Action{
			{Kind: scenario.ApplyTemplate, Template: 1},
			{Kind: scenario.Wait, Delay: 95 * time.Second},
			{Kind: scenario.Wait, Delay: 98 * time.Second},
			{Kind: scenario.PodCrashLoops, Pod: scenario.AgentPod, Index: 58},
		}},
		{"steps dropped from a canary that found its nodes late", Config{Nodes: 5, Steps: true, Analysis: true}, []scenario.Action{
			{Kind: scenario.NodeNotReady, Index: 9},
			{Kind: scenario.NodeNotReady, Index: 41},
			{Kind: scenario.NodeNotReady, Index: 3},
			{Kind: scenario.ApplyTemplate, Template: 1},
			{Kind: scenario.Wait, Delay: 84 * time.Second},
			{Kind: scenario.AnalysisVerdict, Verdict: scenario.VerdictPass, Delay: 2 * time.Second},
			{Kind: scenario.AddNode, Zone: 1},
			{Kind: scenario.Toggle, Setting: scenario.CanarySteps, On: false},
		}},
		{"a canary pod left on a node gone down, which returns while another canary surges", Config{Nodes: 6, MaxSurge: 1, Topology: true}, []scenario.Action{
			{Kind: scenario.ApplyTemplate, Template: 1},
			{Kind: scenario.NodeNotReady, Index: 42},
			{Kind: scenario.ApplyTemplate, Template: 0},
			{Kind: scenario.Wait, Delay: 6 * time.Minute},
			{Kind: scenario.ApplyTemplate, Template: 1},
			{Kind: scenario.NodeReady, Index: 30},
		}},
		{"a node gone down mid-surge returns while the rollout surges elsewhere", Config{Nodes: 4, MaxSurge: 1}, []scenario.Action{
			{Kind: scenario.ApplyTemplate, Template: 1},
			{Kind: scenario.Wait, Delay: 55 * time.Second},
			{Kind: scenario.HoldKubelet, On: true},
			{Kind: scenario.Wait, Delay: 10 * time.Second},
			{Kind: scenario.NodeNotReady, Index: 1},
			{Kind: scenario.Wait, Delay: 6 * time.Minute},
			{Kind: scenario.NodeReady, Index: 1},
		}},
		{"a person fails the canary of the failed template applied again, then an earlier replica set", Config{Nodes: 6, Zones: 3, MaxUnavailable: 1, Steps: true, Analysis: true, Workload: true}, []scenario.Action{
			{Kind: scenario.ApplyTemplate, Template: 1},
			{Kind: scenario.Wait, Delay: 12 * time.Second},
			{Kind: scenario.NodeNotReady, Index: 42},
			{Kind: scenario.Steer, Steer: scenario.Retry, Target: scenario.RunningCanary, Via: scenario.ViaSpec},
			{Kind: scenario.ApplyTemplate, Template: 2},
			{Kind: scenario.ApplyTemplate, Template: 2, LastFailed: true},
			{Kind: scenario.Steer, Steer: scenario.FailCanary, Target: scenario.RunningCanary, Via: scenario.ViaSpec},
			{Kind: scenario.Steer, Steer: scenario.FailCanary, Target: scenario.EarlierReplicaSet, Index: 2, Via: scenario.ViaSpec},
		}},
	}
	for _, s := range stories {
		t.Run(s.name, func(t *testing.T) {
			for _, v := range New(s.cfg).Play(s.seq, quiet) {
				t.Errorf("%s\n%s%s", v, scenario.Story(s.seq), traceOf(s.cfg, s.seq))
			}
		})
	}
}
