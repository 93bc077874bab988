//go:build tools

// Package tools pins the Prometheus binaries the harness builds.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/prometheus"
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
