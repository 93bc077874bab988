package main

import (
	"testing"

	"github.com/onsi/gomega"
)

// The notification-controller's address comes from --events-addr, or from
// EVENTS_ADDR when the flag is not given; a given flag wins, even empty.
func TestEventsAddrFromFlagOrEnvironment(t *testing.T) {
	const fromEnv, fromFlag = "http://notification-controller.flux-system.svc", "http://127.0.0.1:9090"
	env := func(value string) func(string) string {
		return func(name string) string {
			if name == eventsAddrEnv {
				return value
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		env  string
		want string
	}{
		{"neither", nil, "", ""},
		{"environment", nil, fromEnv, fromEnv},
		{"flag", []string{"--events-addr=" + fromFlag}, "", fromFlag},
		{"flag over environment", []string{"--events-addr=" + fromFlag}, fromEnv, fromFlag},
		{"empty flag turns the environment off", []string{"--events-addr="}, fromEnv, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, err := parseOptions(tc.args, env(tc.env))
			gomega.NewWithT(t).Expect(err).NotTo(gomega.HaveOccurred())
			gomega.NewWithT(t).Expect(opts.reconcilers.EventsAddr).To(gomega.Equal(tc.want))
		})
	}
}

func TestBadEventsAddrIsRefused(t *testing.T) {
	g := gomega.NewWithT(t)
	for _, addr := range []string{"notification-controller:80", "ftp://host", "http://"} {
		_, err := parseOptions([]string{"--events-addr=" + addr}, func(string) string { return "" })
		g.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("want the notification-controller's address as http://host:port")), addr)
	}
}
