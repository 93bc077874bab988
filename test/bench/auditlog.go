package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The API server's audit log is the only place that names, for every
// request, the client that sent it: kube-controller-manager's own metrics
// count its requests by HTTP method alone, and its garbage collector's with
// them. Every component of the simulated cluster uses the admin identity, so
// the user agent, which kube-controller-manager suffixes with the
// controller's name, tells them apart.

// auditPolicy logs every resource request once, when its response is
// complete, without bodies. Leases are left out: no controller under test
// takes one, and kwok renews one per node.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: None
  nonResourceURLs: ["*"]
- level: None
  resources:
  - group: coordination.k8s.io
    resources: ["leases"]
- level: Metadata
`

// auditLog is the API server's audit log file, read from where the last
// read ended.
type auditLog struct {
	policyPath, logPath string
}

func newAuditLog(dir string) (*auditLog, error) {
	a := &auditLog{policyPath: filepath.Join(dir, "audit-policy.yaml"), logPath: filepath.Join(dir, "audit.log")}
	if err := os.WriteFile(a.policyPath, []byte(auditPolicy), 0o644); err != nil {
		return nil, fmt.Errorf("writing the audit policy: %w", err)
	}
	return a, nil
}

// apiServerArgs are the kube-apiserver flags that write the log. The
// blocking mode writes an event before the request returns, so that a read
// right after a rollout sees all of its requests; the file is never
// rotated.
func (a *auditLog) apiServerArgs() []string {
	return []string{
		"--audit-policy-file=" + a.policyPath,
		"--audit-log-path=" + a.logPath,
		"--audit-log-mode=blocking",
		"--audit-log-maxsize=0",
		"--audit-log-maxbackup=0",
	}
}

// offset is the log's current end, where a measurement starts.
func (a *auditLog) offset() (int64, error) {
	info, err := os.Stat(a.logPath)
	if err != nil {
		return 0, fmt.Errorf("reading the audit log: %w", err)
	}
	return info.Size(), nil
}

// auditEvent is the part of an audit.k8s.io/v1 Event the benchmark reads.
type auditEvent struct {
	Verb       string    `json:"verb"`
	UserAgent  string    `json:"userAgent"`
	ReceivedAt time.Time `json:"requestReceivedTimestamp"`
	ObjectRef  *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// userAgent picks a client's requests out of the audit log.
type userAgent struct{ prefix, suffix string }

func (u userAgent) String() string { return u.prefix + "..." + u.suffix }

func (u userAgent) matches(agent string) bool {
	return strings.HasPrefix(agent, u.prefix) && strings.HasSuffix(agent, u.suffix)
}

// mark is a part of the JSON line of any request of the agent: most lines
// are other clients', and are skipped before decoding.
func (u userAgent) mark() []byte {
	if u.prefix != "" {
		return []byte(`"userAgent":"` + u.prefix)
	}
	return []byte(u.suffix + `"`)
}

// auditedRequests are one client's requests in the audit log.
type auditedRequests struct {
	// byKind counts them by verb and resource.
	byKind counts
	// received are the times the API server received them.
	received []time.Time
}

// requestsSince reads the requests of agent logged after offset.
func (a *auditLog) requestsSince(offset int64, agent userAgent) (*auditedRequests, error) {
	f, err := os.Open(a.logPath)
	if err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	out := &auditedRequests{byKind: counts{}}
	mark := agent.mark()
	scanner := bufio.NewScanner(f)
	scanner.Buffer(nil, 1<<20)
	for scanner.Scan() {
		line := scanner.Bytes()
		if !bytes.Contains(line, mark) {
			continue
		}
		var ev auditEvent
		// A line that does not decode is one the API server is writing
		// right now, after the measurement ended.
		if json.Unmarshal(line, &ev) != nil || !agent.matches(ev.UserAgent) || ev.ObjectRef == nil {
			continue
		}
		code := strconv.Itoa(ev.ResponseStatus.Code)
		out.byKind[requestKey(ev.Verb, ev.ObjectRef.Resource, ev.ObjectRef.Subresource, code)]++
		out.received = append(out.received, ev.ReceivedAt)
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	return out, nil
}

// peakRate is the highest number of requests received in any window,
// divided by the window.
func (r *auditedRequests) peakRate(window time.Duration) float64 {
	times := slices.SortedFunc(slices.Values(r.received), time.Time.Compare)
	peak, first := 0, 0
	for last, t := range times {
		for t.Sub(times[first]) >= window {
			first++
		}
		peak = max(peak, last-first+1)
	}
	return float64(peak) / window.Seconds()
}
