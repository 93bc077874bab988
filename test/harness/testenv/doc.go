// Package testenv starts envtest API servers on the control-plane binaries
// the tests are given, with the product's CRDs and scheme, and runs a
// controller manager against them. It does not import the controllers
// package, so that the controllers' own tests can use it; the reconcilers
// come in through Wiring. Tests outside that package use test/harness,
// which wires the product's controllers on top.
package testenv
