package scenario

import (
	"fmt"
	"time"
)

// Kind is what an Action does.
type Kind int

// The kinds of action. New kinds are added at the end, so a sequence's
// numbers keep their meaning.
const (
	// ApplyTemplate applies template Template (numbered from 0 in the
	// order a sequence first names them), or, with LastFailed, the
	// template whose canary failed last when there is one.
	ApplyTemplate Kind = iota
	// Steer gives the steering value Steer through Via for Target.
	Steer
	// PauseRollingUpdate and UnpauseRollingUpdate set and clear the
	// rolling-update pause (annotation or spec field, as Via says).
	PauseRollingUpdate
	UnpauseRollingUpdate
	// Freeze and Unfreeze set and clear the rollout freeze.
	Freeze
	Unfreeze
	// PauseCanary and UnpauseCanary set and clear a person's canary pause.
	PauseCanary
	UnpauseCanary
	// Rollback applies again the template of the Index-th earlier
	// revision (1 is the one before the current), as
	// `kubectl eds rollback --to-revision` does.
	Rollback
	// AddNode adds a Ready node in zone Zone.
	AddNode
	// RemoveNode deletes the Index-th node and its pods.
	RemoveNode
	// CordonNode and UncordonNode mark the Index-th node unschedulable and
	// schedulable again.
	CordonNode
	UncordonNode
	// NodeNotReady stops the Index-th node's kubelet: the Node object
	// stays, Ready turns Unknown, its pods stop being available.
	NodeNotReady
	// NodeReady brings the Index-th node back Ready.
	NodeReady
	// PodFails makes the Index-th pod of Pod fail (its container exits
	// and restarts once).
	PodFails
	// PodCrashLoops makes the Index-th pod of Pod restart again and again
	// until it is replaced.
	PodCrashLoops
	// PodEvicted deletes the Index-th pod of Pod, as an eviction does.
	PodEvicted
	// PodReady makes the Index-th pod of Pod Running and Ready, even if
	// the kubelet held it back.
	PodReady
	// AnalysisVerdict is the metric analysis of the running canary
	// concluding Verdict, after Delay, or never when Verdict is
	// VerdictNever.
	AnalysisVerdict
	// Wait lets Delay of time pass.
	Wait
	// Toggle turns Setting on (On) or off.
	Toggle
	// HoldKubelet makes the kubelet leave the pods it creates from now on
	// Pending and not ready (On) or start them again as usual (off).
	HoldKubelet
	// DrainNode starts (On) or ends a drain of the Index-th node: its
	// DrainInProgress lifecycle condition turns True, or False.
	DrainNode
	// DisruptNode taints (On) the Index-th node karpenter.sh/disrupted, as
	// Karpenter does before taking it away, or removes the taint.
	DisruptNode

	numKinds
)

var kindNames = [...]string{
	ApplyTemplate:        "apply",
	Steer:                "steer",
	PauseRollingUpdate:   "pause-rolling-update",
	UnpauseRollingUpdate: "unpause-rolling-update",
	Freeze:               "freeze",
	Unfreeze:             "unfreeze",
	PauseCanary:          "pause-canary",
	UnpauseCanary:        "unpause-canary",
	Rollback:             "rollback",
	AddNode:              "add-node",
	RemoveNode:           "remove-node",
	CordonNode:           "cordon",
	UncordonNode:         "uncordon",
	NodeNotReady:         "node-not-ready",
	NodeReady:            "node-ready",
	PodFails:             "pod-fails",
	PodCrashLoops:        "pod-crash-loops",
	PodEvicted:           "pod-evicted",
	PodReady:             "pod-ready",
	AnalysisVerdict:      "verdict",
	Wait:                 "wait",
	Toggle:               "toggle",
	HoldKubelet:          "hold-kubelet",
	DrainNode:            "drain",
	DisruptNode:          "disrupt",
}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// SteerKind is which steering value a person gives.
type SteerKind int

// Steering values.
const (
	Validate SteerKind = iota
	FailCanary
	UnpauseAutoPause
	SkipStep
	Retry
	numSteerKinds
)

var steerNames = [...]string{"validate", "fail", "unpause", "skip-step", "retry"}

func (s SteerKind) String() string {
	if s >= 0 && int(s) < len(steerNames) {
		return steerNames[s]
	}
	return fmt.Sprintf("steer(%d)", int(s))
}

// Via is how a value is given: the annotation `kubectl eds` writes, or
// the spec field git owns.
type Via int

// Ways to give a value.
const (
	ViaAnnotation Via = iota
	ViaSpec
	numVias
)

func (v Via) String() string {
	if v == ViaSpec {
		return "spec"
	}
	return "annotation"
}

// Target is which replica set a steering value names.
type Target int

// Targets of a steering value.
const (
	// RunningCanary: the canary running now (or, with none, the current
	// template's replica set).
	RunningCanary Target = iota
	// EarlierReplicaSet: the Index-th replica set before the current one
	// (resolved modulo the ones that exist).
	EarlierReplicaSet
	// MadeUpName: a replica set name that names nothing.
	MadeUpName
	numTargets
)

func (t Target) String() string {
	switch t {
	case EarlierReplicaSet:
		return "an earlier replica set"
	case MadeUpName:
		return "a made-up name"
	}
	return "the running canary"
}

// PodOf is which pods an action on a pod picks from.
type PodOf int

// Pod groups.
const (
	// CanaryPod: a pod of the running canary's replica set.
	CanaryPod PodOf = iota
	// AgentPod: any pod of the ExtendedDaemonSet.
	AgentPod
	numPodOfs
)

func (p PodOf) String() string {
	if p == CanaryPod {
		return "canary pod"
	}
	return "agent pod"
}

// Verdict is what the canary's analysis concludes.
type Verdict int

// Verdicts.
const (
	VerdictPass Verdict = iota
	VerdictFail
	VerdictInconclusive
	// VerdictNever: the analysis gets no data and concludes nothing.
	VerdictNever
	numVerdicts
)

var verdictNames = [...]string{"pass", "fail", "inconclusive", "never"}

func (v Verdict) String() string {
	if v >= 0 && int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("verdict(%d)", int(v))
}

// Setting is a part of the spec that changes how a rollout runs.
type Setting int

// Settings.
const (
	// CanarySteps: the canary grows by steps, judged at each.
	CanarySteps Setting = iota
	// TopologyZones: the rolling update goes zone by zone, Sequential,
	// with a bake after each zone.
	TopologyZones
	// InPlace: rollingUpdate.type InPlaceIfPossible.
	InPlace
	// Handover: the ExtendedDaemonSet replaces an old DaemonSet's pods.
	Handover
	// CanaryStrategy: a canary at all (off means a plain rolling update).
	CanaryStrategy
	// ManualValidation: the canary waits for a person's validation.
	ManualValidation
	// Analysis: the canary has a metric analysis that must pass.
	Analysis
	numSettings
)

var settingNames = [...]string{"canary-steps", "topology-zones", "in-place", "handover", "canary", "manual-validation", "analysis"}

func (s Setting) String() string {
	if s >= 0 && int(s) < len(settingNames) {
		return settingNames[s]
	}
	return fmt.Sprintf("setting(%d)", int(s))
}

// Action is one thing that happens. Which fields matter depends on Kind;
// the others are zero.
type Action struct {
	Kind Kind
	// Template is the template number of ApplyTemplate.
	Template int
	// LastFailed: ApplyTemplate applies the template whose canary failed
	// last, Template when none has.
	LastFailed bool
	Steer      SteerKind
	Via        Via
	Target     Target
	// Index picks a node, a pod, an earlier replica set or revision,
	// modulo what exists when the action is played.
	Index   int
	Zone    int
	Pod     PodOf
	Verdict Verdict
	// Delay is the time Wait lets pass, or how late a verdict arrives.
	Delay   time.Duration
	Setting Setting
	On      bool
}

// String tells the action as a line of a story.
func (a Action) String() string {
	switch a.Kind {
	case ApplyTemplate:
		if a.LastFailed {
			return fmt.Sprintf("apply the template whose canary failed last (else template %d)", a.Template)
		}
		return fmt.Sprintf("apply template %d", a.Template)
	case Steer:
		target := a.Target.String()
		if a.Target == EarlierReplicaSet {
			target = fmt.Sprintf("earlier replica set #%d", a.Index)
		}
		return fmt.Sprintf("%s %s via %s", a.Steer, target, a.Via)
	case PauseRollingUpdate, UnpauseRollingUpdate, Freeze, Unfreeze, PauseCanary, UnpauseCanary:
		return fmt.Sprintf("%s via %s", a.Kind, a.Via)
	case Rollback:
		return fmt.Sprintf("rollback %d revision(s)", a.Index)
	case AddNode:
		return fmt.Sprintf("add a node in zone %d", a.Zone)
	case RemoveNode, CordonNode, UncordonNode, NodeNotReady, NodeReady:
		return fmt.Sprintf("%s node #%d", a.Kind, a.Index)
	case DrainNode, DisruptNode:
		if a.On {
			return fmt.Sprintf("%s node #%d", a.Kind, a.Index)
		}
		return fmt.Sprintf("end the %s of node #%d", a.Kind, a.Index)
	case PodFails, PodCrashLoops, PodEvicted, PodReady:
		return fmt.Sprintf("%s: %s #%d", a.Kind, a.Pod, a.Index)
	case AnalysisVerdict:
		if a.Verdict == VerdictNever {
			return "analysis never concludes"
		}
		if a.Delay > 0 {
			return fmt.Sprintf("analysis says %s, %s late", a.Verdict, a.Delay)
		}
		return fmt.Sprintf("analysis says %s", a.Verdict)
	case Wait:
		return fmt.Sprintf("wait %s", a.Delay)
	case Toggle:
		return fmt.Sprintf("%s %s", a.Setting, onOff(a.On))
	case HoldKubelet:
		return fmt.Sprintf("kubelet holds new pods %s", onOff(a.On))
	}
	return a.Kind.String()
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
