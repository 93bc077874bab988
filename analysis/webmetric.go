package analysis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/analysis/web"
	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// WebQuerier asks the endpoint of a web metric for its answer. NewWebQuerier
// builds the controller's; it must give up when its context ends.
type WebQuerier interface {
	QueryWeb(ctx context.Context, m *v1alpha1.WebMetric) (web.Response, error)
}

// WebResolver turns the request of a web metric into one to send, reading
// the Secrets it names: web.Resolve, with the controller's client and the
// ExtendedDaemonSet's namespace.
type WebResolver func(ctx context.Context, r *v1alpha1.WebRequest) (web.Request, error)

// NewWebQuerier sends the requests of web metrics through c, which applies
// the host policy, after resolve has read their Secrets.
func NewWebQuerier(c *web.Client, resolve WebResolver) WebQuerier {
	return webQuerier{client: c, resolve: resolve}
}

type webQuerier struct {
	client  *web.Client
	resolve WebResolver
}

// resolveError is a request that could not be built (a missing Secret or
// key): its message names them and no secret value, and is what to fix.
type resolveError struct{ err error }

func (e *resolveError) Error() string { return e.err.Error() }
func (e *resolveError) Unwrap() error { return e.err }

func (q webQuerier) QueryWeb(ctx context.Context, m *v1alpha1.WebMetric) (web.Response, error) {
	r, err := q.resolve(ctx, &m.WebRequest)
	if err != nil {
		return web.Response{}, &resolveError{err: err}
	}
	r.Method = methodOf(m)
	r.Header = r.Header.Clone()
	if r.Header == nil {
		r.Header = http.Header{}
	}
	if r.Header.Get("Accept") == "" {
		r.Header.Set("Accept", "application/json")
	}
	if r.Method == http.MethodPost {
		r.Body = []byte(m.Body)
		if r.Header.Get("Content-Type") == "" {
			r.Header.Set("Content-Type", "application/json")
		}
	}
	return q.client.Do(ctx, r)
}

func methodOf(m *v1alpha1.WebMetric) string {
	if m.Method == "" {
		return http.MethodGet
	}
	return m.Method
}

// describeWeb is what Measurement.Query shows of a web metric's request:
// the method and the URL when the spec writes it, never one read from a
// Secret.
func describeWeb(m *v1alpha1.WebMetric) string {
	if m.URL != "" {
		return methodOf(m) + " " + m.URL
	}
	if m.URLFrom != nil {
		return fmt.Sprintf("%s (url from key %q of Secret %s)", methodOf(m), m.URLFrom.Key, m.URLFrom.Name)
	}
	return methodOf(m)
}

// checkWebMetric is why a web metric can never be measured, or nil; the
// CRD refuses most of these, a spec stored before them or written around
// them gets the same answer here.
func checkWebMetric(m v1alpha1.AnalysisMetric) error {
	w := m.Web
	switch {
	case m.Query != "" || m.Preset != "":
		return errors.New("sets web and a query or preset: set exactly one")
	case m.Baseline != nil:
		return errors.New("a web metric has no baseline: it is judged by thresholdRange alone")
	case m.ThresholdRange == nil:
		return errors.New("a web metric needs thresholdRange: nothing to judge its value against")
	case (w.URL == "") == (w.URLFrom == nil):
		return errors.New("web needs exactly one of url or urlFrom")
	case w.Method != "" && w.Method != http.MethodGet && w.Method != http.MethodPost:
		return fmt.Errorf("web method %q: use GET or POST", w.Method)
	case w.Body != "" && methodOf(w) != http.MethodPost:
		return errors.New("web body is only sent with method POST")
	}
	if err := web.CheckJSONPath(w.JSONPath); err != nil {
		return fmt.Errorf("web %w", err)
	}
	return nil
}

// MeasureWeb takes one measurement of a web metric at now: it sends its
// request through w and judges the number at its jsonPath by its
// thresholdRange. Like Measure it never returns an error: a problem becomes
// a measurement in phase Error whose message is a fixed text (the status
// code, "timed out", "the answer is not JSON", ...), never the answer's
// body.
func MeasureWeb(ctx context.Context, w WebQuerier, m v1alpha1.AnalysisMetric, now time.Time) v1alpha1.Measurement {
	result := v1alpha1.Measurement{Time: metav1.NewTime(now)}
	v := judgeWeb(ctx, w, m, &result)
	result.Phase, result.Message = v.phase, v.message
	return result
}

func judgeWeb(ctx context.Context, w WebQuerier, m v1alpha1.AnalysisMetric, result *v1alpha1.Measurement) verdict {
	if err := checkMetric(m); err != nil {
		return erroneous("%v", err)
	}
	if w == nil {
		return erroneous("no web client: web metrics cannot be measured")
	}
	result.Query = describeWeb(m.Web)
	resp, err := w.QueryWeb(ctx, m.Web)
	if err != nil {
		return webFailure(ctx, err)
	}
	if !resp.OK() {
		return erroneous("web request %s, not 2xx", web.Reason(nil, resp.StatusCode))
	}
	if resp.Truncated {
		return erroneous("web request answered more than %d KiB", web.MaxResponseBody>>10)
	}
	x, err := web.Number(resp.Body, m.Web.JSONPath)
	if err != nil {
		return erroneous("web request answered %d, but %v", resp.StatusCode, err)
	}
	result.Value = formatValue(x)
	if math.IsNaN(x) {
		return inconclusive("web request answered NaN")
	}
	return judgeThreshold(x, m.ThresholdRange)
}

// webFailure explains a request that got no answer: what to fix when the
// spec or the controller's flags are at fault, a fixed reason otherwise.
func webFailure(ctx context.Context, err error) verdict {
	var (
		notAllowed *web.HostNotAllowedError
		resolve    *resolveError
	)
	switch {
	case errors.As(err, &notAllowed):
		return erroneous("web request refused: %v", notAllowed)
	case errors.As(err, &resolve):
		return erroneous("web request not sent: %v", resolve)
	}
	reason := web.Reason(err, 0)
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(cause, context.DeadlineExceeded) {
		// The step's deadline, not the request's timeout, ended it.
		return erroneous("web request failed: %s: %v", reason, cause)
	}
	return erroneous("web request failed: %s", reason)
}
