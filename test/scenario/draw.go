package scenario

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Options shape what Draw makes. The zero value draws every kind with its
// default weight.
type Options struct {
	// Kinds, when set, are the only kinds drawn.
	Kinds []Kind
	// Weights override the default weight of a kind; 0 never draws it.
	Weights map[Kind]int
	// Settings, when set, are the only settings Toggle turns on or off.
	Settings []Setting
	// MaxTemplates bounds the template numbers (0 is the template a
	// sequence starts from); 4 when unset.
	MaxTemplates int
	// Zones is how many zones nodes are added to; 3 when unset.
	Zones int
	// MaxWait bounds one Wait and a verdict's lateness; 2 minutes when
	// unset.
	MaxWait time.Duration
}

// defaultWeights make time pass often enough for canaries to run their
// durations, and the rest happen between.
var defaultWeights = [numKinds]int{
	ApplyTemplate:        8,
	Steer:                8,
	PauseRollingUpdate:   2,
	UnpauseRollingUpdate: 2,
	Freeze:               1,
	Unfreeze:             2,
	PauseCanary:          1,
	UnpauseCanary:        2,
	Rollback:             3,
	AddNode:              3,
	RemoveNode:           2,
	CordonNode:           2,
	UncordonNode:         2,
	NodeNotReady:         3,
	NodeReady:            3,
	PodFails:             3,
	PodCrashLoops:        2,
	PodEvicted:           3,
	PodReady:             2,
	AnalysisVerdict:      6,
	Wait:                 20,
	Toggle:               4,
	HoldKubelet:          1,
	// Drains and disruptions are drawn by the tests that ask for them
	// (Options.Weights): a default weight would change every sequence
	// the seeds of the other tests stand for.
	DrainNode:   0,
	DisruptNode: 0,
}

func (o Options) weight(k Kind) int {
	if len(o.Kinds) > 0 {
		found := false
		for _, want := range o.Kinds {
			found = found || want == k
		}
		if !found {
			return 0
		}
	}
	if w, ok := o.Weights[k]; ok {
		return w
	}
	return defaultWeights[k]
}

// Draw makes n actions from rng: the same source state, the same
// sequence. Template numbers grow one at a time from 1, the sequence
// starting from template 0 rolled out, so "template k" is new the first
// time it appears and an earlier one afterwards.
func Draw(rng *rand.Rand, n int, opts Options) []Action {
	maxTemplates := orDefault(opts.MaxTemplates, 4)
	zones := orDefault(opts.Zones, 3)
	maxWait := opts.MaxWait
	if maxWait <= 0 {
		maxWait = 2 * time.Minute
	}
	settings := opts.Settings
	if len(settings) == 0 {
		for s := range numSettings {
			settings = append(settings, s)
		}
	}
	total := 0
	for k := range numKinds {
		total += opts.weight(k)
	}
	if total == 0 {
		return nil
	}
	templates := 1
	seq := make([]Action, 0, n)
	for range n {
		pick, kind := rng.IntN(total), Kind(0)
		for k := range numKinds {
			if pick -= opts.weight(k); pick < 0 {
				kind = k
				break
			}
		}
		a := Action{Kind: kind}
		switch kind {
		case ApplyTemplate:
			switch r := rng.IntN(10); {
			case r < 5 && templates < maxTemplates:
				a.Template = templates
				templates++
			case r < 7:
				a.LastFailed, a.Template = true, rng.IntN(templates)
			default:
				a.Template = rng.IntN(templates)
			}
		case Steer:
			a.Steer, a.Via, a.Target = SteerKind(rng.IntN(int(numSteerKinds))), Via(rng.IntN(int(numVias))), Target(rng.IntN(int(numTargets)))
			if a.Target == EarlierReplicaSet {
				a.Index = 1 + rng.IntN(3)
			}
		case PauseRollingUpdate, UnpauseRollingUpdate, Freeze, Unfreeze, PauseCanary, UnpauseCanary:
			a.Via = Via(rng.IntN(int(numVias)))
		case Rollback:
			a.Index = 1 + rng.IntN(3)
		case AddNode:
			a.Zone = rng.IntN(zones)
		case RemoveNode, CordonNode, UncordonNode, NodeNotReady, NodeReady:
			a.Index = rng.IntN(64)
		case DrainNode, DisruptNode:
			a.Index, a.On = rng.IntN(64), rng.IntN(2) == 0
		case PodFails, PodCrashLoops, PodEvicted, PodReady:
			a.Pod, a.Index = PodOf(rng.IntN(int(numPodOfs))), rng.IntN(64)
		case AnalysisVerdict:
			a.Verdict = Verdict(rng.IntN(int(numVerdicts)))
			if a.Verdict != VerdictNever && rng.IntN(3) == 0 {
				a.Delay = randDuration(rng, maxWait)
			}
		case Wait:
			a.Delay = randDuration(rng, maxWait)
		case Toggle:
			a.Setting, a.On = settings[rng.IntN(len(settings))], rng.IntN(2) == 0
		case HoldKubelet:
			a.On = rng.IntN(2) == 0
		}
		seq = append(seq, a)
	}
	return seq
}

// randDuration is a whole number of seconds in [1s, max], small ones more
// likely: most waits are a reconcile or two, some cross a canary duration.
func randDuration(rng *rand.Rand, max time.Duration) time.Duration {
	secs := max2(1, int(max/time.Second))
	if rng.IntN(2) == 0 {
		secs = max2(1, secs/8)
	}
	return time.Duration(1+rng.IntN(secs)) * time.Second
}

// Quiet is a tail of time passing, total long in steps of step, during
// which nothing else happens: appended to a sequence, every rollout it
// started must have ended by its end.
func Quiet(total, step time.Duration) []Action {
	if step <= 0 {
		step = total
	}
	var tail []Action
	for left := total; left > 0; left -= step {
		tail = append(tail, Action{Kind: Wait, Delay: min(step, left)})
	}
	return tail
}

// Story tells a sequence as numbered lines.
func Story(seq []Action) string {
	var b strings.Builder
	for i, a := range seq {
		fmt.Fprintf(&b, "%3d. %s\n", i+1, a)
	}
	return b.String()
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

func max2(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// Rand is the random source of a seed, so every player of a sequence
// draws it the same way from the number it prints.
func Rand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}
