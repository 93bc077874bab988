package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrapeFamilies GETs a Prometheus text endpoint and parses it.
func scrapeFamilies(ctx context.Context, client *http.Client, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("scraping %s: %s: %s", url, resp.Status, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", url, err)
	}
	return families, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// counts are request counters keyed by "verb resource[/subresource]",
// followed by " code=<code>" for a request that failed.
type counts map[string]float64

func requestKey(verb, resource, subresource, code string) string {
	key := verb
	if resource != "" {
		key += " " + resource
		if subresource != "" {
			key += "/" + subresource
		}
	}
	if !strings.HasPrefix(code, "2") {
		key += " code=" + code
	}
	return key
}

// keyFields splits a key into its verb and its resource, subresource
// dropped; the resource is empty when the key has none.
func keyFields(key string) (verb, resource string) {
	fields := strings.Fields(key)
	verb = fields[0]
	if len(fields) > 1 && !strings.HasPrefix(fields[1], "code=") {
		resource, _, _ = strings.Cut(fields[1], "/")
	}
	return verb, resource
}

// sumCounter adds up a counter family's series by the key keyOf gives
// each; a missing family is no requests yet.
func sumCounter(families map[string]*dto.MetricFamily, name string, keyOf func(*dto.Metric) string) counts {
	out := counts{}
	for _, m := range families[name].GetMetric() {
		out[keyOf(m)] += m.GetCounter().GetValue()
	}
	return out
}

// since returns what was counted after base.
func (c counts) since(base counts) counts {
	out := counts{}
	for k, v := range c {
		if d := v - base[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// plus adds other's counts to c's, in a new counts.
func (c counts) plus(other counts) counts {
	out := counts{}
	for _, from := range []counts{c, other} {
		for k, v := range from {
			out[k] += v
		}
	}
	return out
}

func (c counts) total() float64 {
	var sum float64
	for _, v := range c {
		sum += v
	}
	return sum
}

// histogram is one series of a Prometheus histogram: cumulative counts by
// upper bound, +Inf last.
type histogram struct {
	bounds []float64
	counts []float64
}

// histograms reads a histogram family, one per value of byLabel.
func histograms(families map[string]*dto.MetricFamily, name, byLabel string) map[string]histogram {
	out := map[string]histogram{}
	for _, m := range families[name].GetMetric() {
		var h histogram
		for _, b := range m.GetHistogram().GetBucket() {
			h.bounds = append(h.bounds, b.GetUpperBound())
			h.counts = append(h.counts, float64(b.GetCumulativeCount()))
		}
		if n := len(h.bounds); n == 0 || !math.IsInf(h.bounds[n-1], 1) {
			h.bounds = append(h.bounds, math.Inf(1))
			h.counts = append(h.counts, float64(m.GetHistogram().GetSampleCount()))
		}
		out[label(m, byLabel)] = h
	}
	return out
}

// since returns the observations made after base, which has the same
// buckets or none.
func (h histogram) since(base histogram) histogram {
	out := histogram{bounds: h.bounds, counts: slices.Clone(h.counts)}
	if slices.Equal(h.bounds, base.bounds) {
		for i := range out.counts {
			out.counts[i] -= base.counts[i]
		}
	}
	return out
}

// quantile interpolates the q-quantile linearly within its bucket, as
// PromQL's histogram_quantile does; NaN without observations. An answer in
// the +Inf bucket is the highest finite bound.
func (h histogram) quantile(q float64) float64 {
	n := len(h.counts)
	if n == 0 || h.counts[n-1] <= 0 {
		return math.NaN()
	}
	rank := q * h.counts[n-1]
	i, _ := slices.BinarySearchFunc(h.counts, rank, func(c, r float64) int {
		if c < r {
			return -1
		}
		return 1
	})
	if i >= n-1 {
		if n < 2 {
			return math.NaN()
		}
		return h.bounds[n-2]
	}
	lower, below := 0.0, 0.0
	if i > 0 {
		lower, below = h.bounds[i-1], h.counts[i-1]
	}
	inBucket := h.counts[i] - below
	if inBucket <= 0 {
		return h.bounds[i]
	}
	return lower + (h.bounds[i]-lower)*(rank-below)/inBucket
}
