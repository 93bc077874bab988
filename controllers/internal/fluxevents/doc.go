// Package fluxevents sends the events the reconcilers record to Flux's
// notification-controller as well, through github.com/fluxcd/pkg/runtime/events,
// so that Flux Alerts route them to Slack, Teams, PagerDuty, Alertmanager or
// a webhook.
//
// Recorder wraps the Kubernetes event recorder the reconcilers use: it
// records the Kubernetes event as before and puts a snapshot of it on a
// bounded Queue, never waiting. The Queue is a manager Runnable that needs
// leader election, so only the leader sends; its one worker hands each event
// to Flux's recorder, which posts it (with retries) to the
// notification-controller. When the queue is full the event is dropped and
// counted: a slow or absent notification-controller never slows a reconcile.
//
// The notification-controller rate-limits identical events (same object,
// message and metadata revision and token) within its interval, so the
// message sent must be the same each time a transition is told: the part of
// a note that changes between tellings (a count, a measured value, a time)
// is a Detail, which the Kubernetes event shows and the Flux event carries
// as metadata instead of in its message.
package fluxevents
