package main

import (
	"strings"
	"testing"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/manager/memorylimit"
)

// --memory-limit-ratio defaults to the measured part, and a value that is
// not a part of the container's limit stops the manager, naming the flag.
func TestMemoryLimitRatioFlag(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		ratio   float64
		wantErr string
	}{
		{ratio: memorylimit.DefaultRatio},
		{args: []string{"--memory-limit-ratio=0.9"}, ratio: 0.9},
		{args: []string{"--memory-limit-ratio=1"}, ratio: 1},
		{args: []string{"--memory-limit-ratio=0"}, wantErr: "--memory-limit-ratio: memory limit ratio 0"},
		{args: []string{"--memory-limit-ratio=1.2"}, wantErr: "--memory-limit-ratio: memory limit ratio 1.2"},
	} {
		opts, err := parseOptions(tc.args, func(string) string { return "" })
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("parseOptions(%q): error %v, want one containing %q", tc.args, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("parseOptions(%q): %v", tc.args, err)
		case opts.memoryLimitRatio != tc.ratio:
			t.Errorf("parseOptions(%q): ratio %v, want %v", tc.args, opts.memoryLimitRatio, tc.ratio)
		}
	}
}
