package controllers

import (
	"testing"
	"time"
)

func TestOnceEvery(t *testing.T) {
	o := newOnceEvery(time.Minute)
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	steps := []struct {
		key  string
		at   time.Duration
		want bool
	}{
		{"quota", 0, true},
		{"quota", 30 * time.Second, false},
		{"webhook", 30 * time.Second, true},
		{"quota", time.Minute, true},
		{"quota", 90 * time.Second, false},
	}
	for _, s := range steps {
		if got := o.allow(s.key, t0.Add(s.at)); got != s.want {
			t.Errorf("allow(%q) at +%s = %v, want %v", s.key, s.at, got, s.want)
		}
	}
}

func TestOnceEveryForgetsOldCausesWhenFull(t *testing.T) {
	o := newOnceEvery(time.Minute)
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for i := range maxRefusalCauses {
		o.allow(string(rune('a'+i%26))+time.Duration(i).String(), t0)
	}
	o.allow("new", t0.Add(2*time.Minute))
	if len(o.last) != 1 {
		t.Fatalf("%d causes remembered after the interval, want only the new one", len(o.last))
	}
}
