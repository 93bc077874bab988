// Package web sends requests to endpoints of the user's: the web metrics of
// a canary analysis and the canary's webhooks share it.
//
// Whoever may create an ExtendedDaemonSet chooses where these requests go,
// and the controller sends them from inside the cluster, so the package
// bounds what a request can reach and what it costs:
//
//   - HostPolicy refuses loopback, link-local (cloud metadata at
//     169.254.169.254 included) and the API server's addresses unless the
//     manager's --allowed-webhook-hosts lists the host or a CIDR holding the
//     address. The check runs on the address actually dialed (a
//     net.Dialer's Control), so a name that resolves to a refused address,
//     now or after a DNS change, is refused too. Redirects are never
//     followed: a 3xx is an answer like any other non-2xx one. Proxies from
//     the environment are not used, since the policy could then only see
//     the proxy's address.
//   - Each attempt is bounded by the request's timeout (at most
//     MaxTimeout), retries (at most MaxRetries) only follow connection
//     errors, 429 and 5xx, with exponential backoff, and at most
//     MaxResponseBody bytes of an answer are read.
//   - Errors never carry secret values: not the URL read from a Secret (an
//     error names its host at most), not a header, not the signing key.
//     Callers put Reason, a short fixed text, into status and events, and
//     never the answer's body.
//
// Resolve reads what a v1alpha1.WebRequest takes from Secrets; Client.Do
// sends the Request it returns.
package web
