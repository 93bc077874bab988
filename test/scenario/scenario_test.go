package scenario

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDrawIsReproducibleFromItsSeed(t *testing.T) {
	a := Draw(rand.New(rand.NewPCG(7, 7)), 200, Options{})
	b := Draw(rand.New(rand.NewPCG(7, 7)), 200, Options{})
	if !reflect.DeepEqual(a, b) {
		t.Fatal("one seed drew two sequences")
	}
	if c := Draw(rand.New(rand.NewPCG(8, 8)), 200, Options{}); reflect.DeepEqual(a, c) {
		t.Fatal("two seeds drew one sequence")
	}
}

func TestDrawReachesEveryKindSettingAndSteeringValue(t *testing.T) {
	// Drains and disruptions are drawn only when asked for (see
	// defaultWeights).
	seq := Draw(rand.New(rand.NewPCG(1, 2)), 5000, Options{Weights: map[Kind]int{DrainNode: 2, DisruptNode: 2}})
	kinds, steers, settings := map[Kind]bool{}, map[[3]int]bool{}, map[Setting]bool{}
	newTemplates, lastFailed := 0, 0
	for _, a := range seq {
		kinds[a.Kind] = true
		switch a.Kind {
		case Steer:
			steers[[3]int{int(a.Steer), int(a.Via), int(a.Target)}] = true
		case Toggle:
			settings[a.Setting] = true
		case ApplyTemplate:
			if a.LastFailed {
				lastFailed++
			}
		}
	}
	for _, a := range seq {
		switch {
		case a.Kind != ApplyTemplate:
		case a.Template == newTemplates+1 && !a.LastFailed:
			newTemplates++
		case a.Template > newTemplates:
			t.Fatalf("template %d named before template %d", a.Template, newTemplates+1)
		}
	}
	if len(kinds) != int(numKinds) {
		t.Errorf("drew %d kinds of %d", len(kinds), numKinds)
	}
	if want := int(numSteerKinds) * int(numVias) * int(numTargets); len(steers) != want {
		t.Errorf("drew %d steering combinations of %d", len(steers), want)
	}
	if len(settings) != int(numSettings) {
		t.Errorf("toggled %d settings of %d", len(settings), numSettings)
	}
	if lastFailed == 0 || newTemplates == 0 {
		t.Errorf("templates: %d new, %d back to the failed one", newTemplates, lastFailed)
	}
}

func TestDrawKeepsToTheKindsAsked(t *testing.T) {
	seq := Draw(rand.New(rand.NewPCG(3, 3)), 300, Options{Kinds: []Kind{Wait, AddNode}, Settings: []Setting{InPlace}})
	for _, a := range seq {
		if a.Kind != Wait && a.Kind != AddNode {
			t.Fatalf("drew %s", a)
		}
		if a.Kind == Wait && (a.Delay < time.Second || a.Delay > 2*time.Minute) {
			t.Fatalf("wait of %s", a.Delay)
		}
	}
	if got := Draw(rand.New(rand.NewPCG(3, 3)), 10, Options{Weights: map[Kind]int{}, Kinds: []Kind{}}); len(got) != 10 {
		t.Fatalf("drew %d of 10", len(got))
	}
}

func TestEveryActionTellsItself(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range Draw(rand.New(rand.NewPCG(5, 5)), 3000, Options{}) {
		s := a.String()
		if s == "" || strings.Contains(s, "kind(") || strings.Contains(s, "(%!") {
			t.Fatalf("%#v tells %q", a, s)
		}
		seen[s] = true
	}
	if len(seen) < 100 {
		t.Fatalf("only %d distinct lines", len(seen))
	}
	story := Story([]Action{{Kind: ApplyTemplate, Template: 1}, {Kind: Wait, Delay: time.Minute}})
	if story != "  1. apply template 1\n  2. wait 1m0s\n" {
		t.Fatalf("story %q", story)
	}
}

func TestQuietAddsUpToItsTotal(t *testing.T) {
	var sum time.Duration
	tail := Quiet(25*time.Second, 10*time.Second)
	for _, a := range tail {
		sum += a.Delay
	}
	if len(tail) != 3 || sum != 25*time.Second {
		t.Fatalf("%d waits adding to %s", len(tail), sum)
	}
}

// A failure that needs a template change, then a node going NotReady,
// then a verdict, in that order, shrinks to exactly those three.
func TestShrinkKeepsWhatTheFailureNeeds(t *testing.T) {
	fails := func(seq []Action) bool {
		want := []Kind{ApplyTemplate, NodeNotReady, AnalysisVerdict}
		for _, a := range seq {
			if len(want) > 0 && a.Kind == want[0] {
				want = want[1:]
			}
		}
		return len(want) == 0
	}
	seq := Draw(rand.New(rand.NewPCG(11, 11)), 400, Options{})
	if !fails(seq) {
		t.Fatal("the drawn sequence does not hold the failure")
	}
	calls := 0
	got := Shrink(seq, func(s []Action) bool { calls++; return fails(s) })
	if len(got) != 3 || got[0].Kind != ApplyTemplate || got[1].Kind != NodeNotReady || got[2].Kind != AnalysisVerdict {
		t.Fatalf("shrunk to\n%s", Story(got))
	}
	t.Logf("400 actions shrunk to 3 in %d replays", calls)
	passing := []Action{{Kind: Wait, Delay: time.Second}}
	if got := Shrink(passing, fails); !reflect.DeepEqual(got, passing) {
		t.Fatalf("a passing sequence shrunk to %v", got)
	}
}
