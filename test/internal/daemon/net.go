package daemon

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
)

// FreePorts reserves n distinct free ports on 127.0.0.1. The listeners stay
// open until all are chosen so the kernel cannot hand out one port twice;
// another process may still take one before the daemon binds it.
func FreePorts(n int) ([]string, error) {
	ports := make([]string, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	return ports, nil
}

// HTTPOK returns a readiness check that GETs url with client and wants 200.
func HTTPOK(client *http.Client, url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return nil
	}
}
