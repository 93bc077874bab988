package controllers

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/analysis/web"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/notify"
)

// newNotifier is the webhooks' notifier of mgr, added to it so that it
// runs on the leader only; it sends with c, the client of web metrics,
// under the same host policy.
func newNotifier(mgr ctrl.Manager, c *web.Client) (*notify.Notifier, error) {
	n := notify.New(webhookDeliver(mgr.GetAPIReader(), c, mgr.GetLogger().WithName("webhooks")), notify.Options{})
	if err := mgr.Add(n); err != nil {
		return nil, fmt.Errorf("adding the webhooks' notifier: %w", err)
	}
	return n, nil
}

// webhookDeliver POSTs a delivery's JSON with c, reading the Secrets its
// request names with reader (around the cache, which holds no Secret). The
// answer is the status code or a short fixed reason: never the body, which
// a receiver writes and which must not reach status or events. A host the
// policy refuses says how to allow it.
func webhookDeliver(reader client.Reader, c *web.Client, log logr.Logger) notify.Deliver {
	return func(ctx context.Context, d notify.Delivery) notify.Answer {
		log := log.WithValues("extendeddaemonset", d.EDS, "webhook", d.Webhook.Name, "type", d.Webhook.Type, "delivery", d.ID)
		req, err := web.Resolve(ctx, reader, d.EDS.Namespace, &d.Webhook.WebRequest)
		if err != nil {
			log.Info("webhook not sent", "reason", err.Error())
			return notify.Answer{Failed: true, Reason: err.Error()}
		}
		req.Method, req.Body, req.DeliveryID = http.MethodPost, d.Body, d.ID
		if req.Header == nil {
			req.Header = http.Header{}
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(ctx, req)
		answer := notify.Answer{OK: err == nil && resp.OK(), Failed: err != nil, Reason: web.Reason(err, resp.StatusCode)}
		if notAllowed := (*web.HostNotAllowedError)(nil); errors.As(err, &notAllowed) {
			answer.Reason = notAllowed.Error()
		}
		if !answer.OK {
			log.Info("webhook delivery failed", "reason", answer.Reason)
		}
		return answer
	}
}
