// Package scenario is the vocabulary of the ordinary things that happen to
// an ExtendedDaemonSet, and the drawing of random sequences of them from a
// seed, so that the rollouts nobody scripted get tried.
//
// An Action is one thing a person, a node, a pod, the metric analysis or
// the clock does: a template applied (a new one, an earlier one, the one
// whose canary failed), a steering value given (validate, fail, unpause,
// skip-step, retry; through its annotation or its spec twin; for the
// running canary, an earlier replica set or a name nobody made), the
// rolling update paused, frozen or rolled back, a node added, removed,
// cordoned, drained or disrupted by Karpenter (and back), turning NotReady
// and back, an agent or canary pod failing,
// crash-looping, evicted or becoming ready, an analysis verdict arriving on
// time, late or never, time passing, and the settings that change how a
// rollout runs (canary steps, topology zones, in-place updates, the
// handover from an old DaemonSet) turned on and off.
//
// Actions refer to things abstractly (template k, the i-th node, the
// running canary, an earlier replica set) and never by a cluster's names,
// so a sequence drawn once plays the same story wherever it is played: the
// pure model of test/scenario/model over an in-memory cluster, or a walk
// on the simulated cluster. A player resolves an index modulo what exists
// when the action is played, and an action that has nothing to act on
// (evict a canary pod while no canary runs) does nothing.
//
// Draw makes a sequence from a random source, so a seed reproduces it;
// Quiet is the tail of time passing after which every rollout must have
// ended; Shrink reduces a failing sequence to a small one that still fails
// (delta debugging over the action list), and Story prints a sequence as
// the numbered story a failure message shows.
package scenario
