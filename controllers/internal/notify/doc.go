// Package notify sends the webhooks of spec.strategy.canary.webhooks off
// the reconcile path. Gates (confirm-*) are asked by a bounded pool of
// workers, one ask in flight per gate and canary instance; the answer is
// kept in memory for the next reconcile, which records in status whether
// the gate passed, and the ExtendedDaemonSet is requeued when it arrives.
// Notifications (event, rollback) go through a bounded queue per receiver:
// one that fails or hangs delays no other, and a full queue drops, counted
// in extendeddaemonset_webhook_deliveries_total.
//
// It builds the Payload every webhook receives, and sends through the
// Deliver function its caller gives (the reconcilers build it on
// analysis/web, which holds the host policy, signing and retries). Only
// the leader sends: the Notifier is a Runnable that needs leader election.
//
// Like the rest of controllers/internal, it never imports package
// controllers, the decision packages or analysis.
package notify
