package web

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
)

// AllowedHostsFlag is the manager's flag that lists the hosts and CIDRs
// requests may reach although the policy refuses them by default.
const AllowedHostsFlag = "allowed-webhook-hosts"

// metadataAddrs are cloud metadata services outside the link-local range:
// AWS serves its instance metadata (credentials included) on this IPv6
// unique-local address as well as on 169.254.169.254.
var metadataAddrs = []netip.Addr{netip.MustParseAddr("fd00:ec2::254")}

// HostPolicy says which hosts a request may reach. Every host is allowed
// but loopback, link-local and unspecified addresses, cloud metadata
// addresses and the API server's addresses; a host or CIDR listed in
// --allowed-webhook-hosts may reach those too. The zero value is the
// default policy without an API server.
type HostPolicy struct {
	// APIServer is the API server's address, as a rest.Config's Host holds
	// it (a URL, host:port or a host). Requests to its host, and to the
	// addresses that host resolves to, are refused unless allowed.
	APIServer string

	// hosts are the names allowed whatever they resolve to, lower-case
	// without a trailing dot.
	hosts map[string]bool
	// prefixes are the address ranges allowed.
	prefixes []netip.Prefix
}

// ParseHostPolicy reads the hosts and CIDRs of --allowed-webhook-hosts: a
// host name (allowed whatever it resolves to), an IP address or a CIDR
// (allowed addresses). Blank entries are ignored.
func ParseHostPolicy(allowed []string) (HostPolicy, error) {
	var p HostPolicy
	for _, entry := range allowed {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		if prefix, err := netip.ParsePrefix(entry); err == nil {
			p.prefixes = append(p.prefixes, prefix.Masked())
			continue
		}
		if addr, err := netip.ParseAddr(strings.Trim(entry, "[]")); err == nil {
			addr = addr.Unmap()
			p.prefixes = append(p.prefixes, netip.PrefixFrom(addr, addr.BitLen()))
			continue
		}
		if strings.Contains(entry, "/") || !validHostName(entry) {
			return HostPolicy{}, fmt.Errorf("--%s: %q is neither a host name, an IP address nor a CIDR", AllowedHostsFlag, entry)
		}
		if p.hosts == nil {
			p.hosts = map[string]bool{}
		}
		p.hosts[normalizeHost(entry)] = true
	}
	return p, nil
}

// validHostName is true for a DNS name: dot-separated labels of letters,
// digits, hyphens and underscores.
func validHostName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !hostNameRune(r) {
				return false
			}
		}
	}
	return true
}

func hostNameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_'
}

func normalizeHost(host string) string {
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

// HostNotAllowedError is a request refused by the host policy. Its message
// tells the operator what to change.
type HostNotAllowedError struct {
	// Host is the host of the URL.
	Host string
	// Addr is the address it resolved to, when it is not Host itself.
	Addr string
}

func (e *HostNotAllowedError) Error() string {
	if e.Addr == "" || e.Addr == e.Host {
		return fmt.Sprintf("host %s is not allowed for webhooks and web metrics: add it to --%s", e.Host, AllowedHostsFlag)
	}
	return fmt.Sprintf("host %s resolves to %s, which is not allowed for webhooks and web metrics: add the host or the address to --%s",
		e.Host, e.Addr, AllowedHostsFlag)
}

// apiServerHost is the host of HostPolicy.APIServer, lower-case; empty when
// there is none.
func (p HostPolicy) apiServerHost() string {
	s := strings.TrimSpace(p.APIServer)
	if s == "" {
		return ""
	}
	if strings.Contains(s, "://") {
		if u, err := url.Parse(s); err == nil {
			return normalizeHost(u.Hostname())
		}
		return ""
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		return normalizeHost(host)
	}
	return normalizeHost(strings.Trim(s, "[]"))
}

// hostAllowed is true when host is listed by name: it may then reach any
// address.
func (p HostPolicy) hostAllowed(host string) bool {
	return p.hosts[normalizeHost(host)]
}

// addrListed is true when a listed IP or CIDR holds addr.
func (p HostPolicy) addrListed(addr netip.Addr) bool {
	for _, prefix := range p.prefixes {
		if prefix.Contains(addr) {
			return true
		}
	}
	return false
}

// refusedByDefault is true for the addresses only the flag opens: loopback,
// link-local, unspecified (0.0.0.0 reaches the local host), cloud metadata,
// and the API server's.
func refusedByDefault(addr netip.Addr, apiServer []netip.Addr) bool {
	if addr.IsLoopback() || addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast() || addr.IsUnspecified() {
		return true
	}
	for _, list := range [][]netip.Addr{metadataAddrs, apiServer} {
		for _, a := range list {
			if a == addr {
				return true
			}
		}
	}
	return false
}

// apiServerTTL is how long the API server's resolved addresses are kept:
// they rarely change, and resolving them on every dial would double the
// lookups.
const apiServerTTL = time.Minute

// guard applies a HostPolicy at dial time; it caches the API server's
// addresses.
type guard struct {
	policy HostPolicy

	mu        sync.Mutex
	apiAddrs  []netip.Addr
	resolved  time.Time
	lookupNet func(ctx context.Context, network, host string) ([]netip.Addr, error)
}

func newGuard(policy HostPolicy) *guard {
	return &guard{policy: policy, lookupNet: net.DefaultResolver.LookupNetIP}
}

// apiServerAddrs are the addresses of the API server's host, resolved at
// most once per apiServerTTL. A failed lookup leaves the host name itself
// refused, which checkHost does.
func (g *guard) apiServerAddrs(ctx context.Context) []netip.Addr {
	host := g.policy.apiServerHost()
	if host == "" {
		return nil
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{addr.Unmap()}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.resolved.IsZero() && time.Since(g.resolved) < apiServerTTL {
		return g.apiAddrs
	}
	addrs, err := g.lookupNet(ctx, "ip", host)
	if err != nil {
		return g.apiAddrs
	}
	// A new slice: callers read the previous one without the lock.
	fresh := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		fresh = append(fresh, a.Unmap())
	}
	g.apiAddrs = fresh
	g.resolved = time.Now()
	return g.apiAddrs
}

// checkHost refuses a URL's host before any lookup when it is the API
// server's host by name.
func (g *guard) checkHost(host string) error {
	if g.policy.hostAllowed(host) {
		return nil
	}
	if api := g.policy.apiServerHost(); api != "" && normalizeHost(host) == api {
		if addr, err := netip.ParseAddr(host); err == nil && g.policy.addrListed(addr.Unmap()) {
			return nil
		}
		return &HostNotAllowedError{Host: host}
	}
	return nil
}

// checkAddr is the decision on the address about to be dialed for host.
func (g *guard) checkAddr(ctx context.Context, host string, addr netip.Addr) error {
	addr = addr.Unmap()
	if g.policy.hostAllowed(host) || g.policy.addrListed(addr) {
		return nil
	}
	if refusedByDefault(addr, g.apiServerAddrs(ctx)) {
		return &HostNotAllowedError{Host: host, Addr: addr.String()}
	}
	return nil
}
