package main

import "testing"

// The rate limit flags keep the names and defaults of Flux's controllers.
func TestClientFlags(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		qps   float32
		burst int
	}{
		{qps: 50, burst: 300},
		{args: []string{"--kube-api-qps=200", "--kube-api-burst=400"}, qps: 200, burst: 400},
	} {
		opts, err := parseOptions(tc.args, func(string) string { return "" })
		if err != nil {
			t.Fatalf("parseOptions(%q): %v", tc.args, err)
		}
		if opts.client.QPS != tc.qps || opts.client.Burst != tc.burst {
			t.Errorf("parseOptions(%q): QPS %v, burst %d; want %v, %d", tc.args, opts.client.QPS, opts.client.Burst, tc.qps, tc.burst)
		}
	}
}
