package web

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func mustPolicy(t *testing.T, allowed ...string) HostPolicy {
	t.Helper()
	p, err := ParseHostPolicy(allowed)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseHostPolicyRefusesWhatIsNeitherHostNorAddress(t *testing.T) {
	for _, entry := range []string{"10.0.0.0/33", "http://receiver", "a..b", "-receiver", "host/path", "rec eiver"} {
		_, err := ParseHostPolicy([]string{"127.0.0.1", entry})
		if err == nil {
			t.Errorf("%q: no error", entry)
			continue
		}
		if !strings.Contains(err.Error(), "--allowed-webhook-hosts") || !strings.Contains(err.Error(), entry) {
			t.Errorf("%q: error %q does not name the flag and the entry", entry, err)
		}
	}
	p := mustPolicy(t, " ", "", "Receiver.Example.", "10.0.0.0/8", "::1", "[fe80::1]")
	if !p.hostAllowed("receiver.example") || len(p.prefixes) != 3 {
		t.Errorf("policy %+v", p)
	}
}

// The decisions of the policy on the address dialed for a host.
func TestHostPolicyDecisions(t *testing.T) {
	apiServer := "https://api.cluster.test:6443"
	lookup := func(context.Context, string, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("192.0.2.10")}, nil
	}
	cases := []struct {
		name    string
		allowed []string
		host    string
		addr    string
		refused bool
	}{
		{"public address", nil, "receiver.example", "203.0.113.5", false},
		{"private address", nil, "receiver.ns.svc", "10.1.2.3", false},
		{"loopback", nil, "127.0.0.1", "127.0.0.1", true},
		{"loopback elsewhere in 127/8", nil, "127.1.2.3", "127.1.2.3", true},
		{"IPv6 loopback", nil, "::1", "::1", true},
		{"IPv4-mapped loopback", nil, "::ffff:127.0.0.1", "::ffff:127.0.0.1", true},
		{"name resolving to loopback", nil, "localhost", "127.0.0.1", true},
		{"unspecified", nil, "0.0.0.0", "0.0.0.0", true},
		{"link-local", nil, "169.254.10.1", "169.254.10.1", true},
		{"metadata", nil, "169.254.169.254", "169.254.169.254", true},
		{"IPv6 link-local", nil, "fe80::1", "fe80::1", true},
		{"AWS IPv6 metadata", nil, "fd00:ec2::254", "fd00:ec2::254", true},
		{"API server address", nil, "192.0.2.10", "192.0.2.10", true},
		{"name resolving to the API server", nil, "other.example", "192.0.2.10", true},
		{"allowed address", []string{"127.0.0.1"}, "127.0.0.1", "127.0.0.1", false},
		{"allowed CIDR", []string{"169.254.0.0/16"}, "169.254.169.254", "169.254.169.254", false},
		{"CIDR that does not hold it", []string{"10.0.0.0/8"}, "127.0.0.1", "127.0.0.1", true},
		{"allowed name", []string{"localhost"}, "LocalHost.", "127.0.0.1", false},
		{"allowed name does not allow the address for others", []string{"localhost"}, "rebound.example", "127.0.0.1", true},
		{"allowed API server address", []string{"192.0.2.10"}, "192.0.2.10", "192.0.2.10", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := mustPolicy(t, c.allowed...)
			p.APIServer = apiServer
			g := newGuard(p)
			g.lookupNet = lookup
			err := g.checkAddr(context.Background(), c.host, netip.MustParseAddr(c.addr))
			if !c.refused {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var notAllowed *HostNotAllowedError
			if !errors.As(err, &notAllowed) {
				t.Fatalf("got %v, want a HostNotAllowedError", err)
			}
		})
	}
}

// The API server is refused by name before any lookup, whatever form the
// rest.Config's Host takes.
func TestHostPolicyRefusesTheAPIServerByName(t *testing.T) {
	for _, apiServer := range []string{"https://API.cluster.test:6443", "api.cluster.test:6443", "api.cluster.test"} {
		g := newGuard(HostPolicy{APIServer: apiServer})
		if err := g.checkHost("api.cluster.test"); err == nil {
			t.Errorf("APIServer %q: the API server's host was not refused", apiServer)
		}
		if err := g.checkHost("receiver.cluster.test"); err != nil {
			t.Errorf("APIServer %q: another host was refused: %v", apiServer, err)
		}
		g = newGuard(HostPolicy{APIServer: apiServer, hosts: map[string]bool{"api.cluster.test": true}})
		if err := g.checkHost("api.cluster.test"); err != nil {
			t.Errorf("APIServer %q: the allowed API server was refused: %v", apiServer, err)
		}
	}
}

func TestHostNotAllowedErrorTellsWhatToDo(t *testing.T) {
	cases := map[string]*HostNotAllowedError{
		"host 127.0.0.1 is not allowed for webhooks and web metrics: add it to --allowed-webhook-hosts": {Host: "127.0.0.1", Addr: "127.0.0.1"},
		"host localhost resolves to ::1, which is not allowed for webhooks and web metrics: add the host or the address to --allowed-webhook-hosts": {
			Host: "localhost", Addr: "::1",
		},
	}
	for want, err := range cases {
		if err.Error() != want {
			t.Errorf("got %q, want %q", err, want)
		}
	}
}
