// Package notifications tests the controller's Flux notifications end to
// end, with the real notification-controller (built by
// test/tools/testbin.sh into KUBEBUILDER_ASSETS, its CRDs beside it): a
// simulated cluster, the Alert CRD patched by kustomize/flux-notifications,
// a generic Provider pointing at a local HTTP receiver, an Alert naming our
// kinds, and the manager run as its own process with --events-addr. A
// recording proxy between the manager and the notification-controller shows
// what the manager sent, before the notification-controller keeps part of
// its metadata to itself (the token).
package notifications
