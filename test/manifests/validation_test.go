package manifests

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

// validEDS uses every part of the spec, so each invalid case changes one
// thing of an otherwise valid object.
const validEDS = `
apiVersion: extendeddaemonset.io/v1alpha1
kind: ExtendedDaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
    matchExpressions:
    - {key: tier, operator: In, values: [node]}
  template:
    metadata:
      labels: {app: agent, tier: node}
    spec:
      containers:
      - {name: agent, image: registry.k8s.io/pause:3.10}
  strategy:
    rollingUpdate:
      maxUnavailable: 10%
      maxSurge: 1
      slowStartIntervalDuration: 30s
      slowStartAdditiveIncrease: 2
      maxPodSchedulerFailure: 5%
    canary:
      replicas: 2
      duration: 10m
      noRestartsDuration: 5m
      autoPause: {maxRestarts: 2, maxSlowStartDuration: 2m}
      autoFail: {maxRestarts: 4, canaryTimeout: 30m}
      analysis:
        provider:
          prometheus: {address: "http://prometheus.monitoring:9090"}
        interval: 30s
        metrics:
        - name: restarts
          preset: restarts
        - name: errors
          preset: errorRate
          errorRate: {requestMetric: http_requests_total, errorSelector: 'code=~"5.."'}
          thresholdRange: {max: 0.01}
          baseline:
            maxRelativeIncrease: 50
            mannWhitney: {confidence: 0.95}
        - name: synthetic
          web:
            url: "https://checks.example/api/agent?window=5m"
            headersFrom: {name: checks-headers}
            signingKeyFrom: {name: checks, key: signing-key}
            requestTimeout: 5s
            retries: 3
            method: POST
            body: '{"service": "agent"}'
            jsonPath: "{.data.failureRate}"
          thresholdRange: {max: 0.01}
`

const validSetting = `
apiVersion: extendeddaemonset.io/v1alpha1
kind: ExtendedDaemonsetSetting
metadata:
  name: large-nodes
spec:
  reference: {kind: ExtendedDaemonSet, name: agent}
  nodeSelector:
    matchLabels: {size: large}
  containers:
  - name: agent
    resources:
      requests: {cpu: 100m}
`

// workloadRef names the DaemonSet an ExtendedDaemonSet rolls out.
var workloadRef = map[string]any{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent"}

type mutation func(obj map[string]any)

// set replaces the value at a dotted path.
func set(path string, value any) mutation {
	return func(obj map[string]any) {
		if err := unstructured.SetNestedField(obj, value, strings.Split(path, ".")...); err != nil {
			panic(fmt.Sprintf("set %s: %v", path, err))
		}
	}
}

// del removes the value at a dotted path.
func del(path string) mutation {
	return func(obj map[string]any) { unstructured.RemoveNestedField(obj, strings.Split(path, ".")...) }
}

func metric(fields map[string]any) map[string]any {
	m := map[string]any{"name": "m"}
	for k, v := range fields {
		m[k] = v
	}
	return m
}

func metrics(ms ...map[string]any) mutation {
	list := make([]any, len(ms))
	for i, m := range ms {
		list[i] = m
	}
	return set("spec.strategy.canary.analysis.metrics", list)
}

// webhook is a webhook of spec.strategy.canary.webhooks to
// https://hooks.example, with the given fields (name, value, ...) set.
func webhook(name, typ string, fields ...string) map[string]any {
	w := map[string]any{"name": name, "type": typ, "url": "https://hooks.example/" + name}
	for i := 0; i+1 < len(fields); i += 2 {
		w[fields[i]] = fields[i+1]
	}
	return w
}

func webhooks(ws ...map[string]any) mutation {
	list := make([]any, len(ws))
	for i, w := range ws {
		list[i] = w
	}
	return set("spec.strategy.canary.webhooks", list)
}

func elevenWebhooks() []map[string]any {
	out := make([]map[string]any, 11)
	for i := range out {
		out[i] = webhook(fmt.Sprintf("w%d", i), "event")
	}
	return out
}

// webMetric is a valid web metric with fields changed: a nil value removes
// a field.
func webMetric(webFields, metricFields map[string]any) map[string]any {
	web := map[string]any{"url": "http://checks.example/agent", "jsonPath": "{.value}"}
	for k, v := range webFields {
		if v == nil {
			delete(web, k)
			continue
		}
		web[k] = v
	}
	m := metric(map[string]any{"web": web, "thresholdRange": map[string]any{"max": 1.0}})
	for k, v := range metricFields {
		if v == nil {
			delete(m, k)
			continue
		}
		m[k] = v
	}
	return m
}

type invalidCase struct {
	name    string
	base    string
	changes []mutation
	// field and message must both appear in the API server's answer.
	field, message string
}

const (
	ru     = "spec.strategy.rollingUpdate"
	canary = "spec.strategy.canary"
	an     = "spec.strategy.canary.analysis"
)

var invalidCases = []invalidCase{
	{"maxUnavailable not a number or percentage", validEDS, []mutation{set(ru+".maxUnavailable", "ten")}, ru + ".maxUnavailable", "percentage"},
	{"maxUnavailable above 100%", validEDS, []mutation{set(ru+".maxUnavailable", "150%")}, ru + ".maxUnavailable", "between 0% and 100%"},
	{"maxUnavailable negative", validEDS, []mutation{set(ru+".maxUnavailable", int64(-1))}, ru + ".maxUnavailable", ">= 0"},
	{"maxSurge above 100%", validEDS, []mutation{set(ru+".maxSurge", "101%")}, ru + ".maxSurge", "maxSurge must be"},
	{"maxUnavailable and maxSurge both zero", validEDS, []mutation{set(ru+".maxUnavailable", int64(0)), set(ru+".maxSurge", int64(0))}, ru + ".maxUnavailable", "cannot both be zero"},
	{"maxUnavailable 0% and maxSurge 0", validEDS, []mutation{set(ru+".maxUnavailable", "0%"), set(ru+".maxSurge", "0%")}, ru + ".maxUnavailable", "cannot both be zero"},
	{"maxParallelPodCreation zero", validEDS, []mutation{set(ru+".maxParallelPodCreation", int64(0))}, ru + ".maxParallelPodCreation", "greater than or equal to 1"},
	{"slowStartIntervalDuration malformed", validEDS, []mutation{set(ru+".slowStartIntervalDuration", "soon")}, ru + ".slowStartIntervalDuration", "should match"},
	{"slowStartIntervalDuration zero", validEDS, []mutation{set(ru+".slowStartIntervalDuration", "0s")}, ru + ".slowStartIntervalDuration", "positive duration"},
	{"slowStartAdditiveIncrease zero", validEDS, []mutation{set(ru+".slowStartAdditiveIncrease", int64(0))}, ru + ".slowStartAdditiveIncrease", ">= 1"},
	{"maxPodSchedulerFailure malformed", validEDS, []mutation{set(ru+".maxPodSchedulerFailure", "x%")}, ru + ".maxPodSchedulerFailure", "maxPodSchedulerFailure must be"},
	{"rolling update type unknown", validEDS, []mutation{set(ru+".type", "Replace")}, ru + ".type", "Unsupported value"},
	{"canary replicas zero", validEDS, []mutation{set(canary+".replicas", int64(0))}, canary + ".replicas", "canary replicas must be"},
	{"canary replicas 0%", validEDS, []mutation{set(canary+".replicas", "0%")}, canary + ".replicas", "between 1% and 100%"},
	{"canary duration malformed", validEDS, []mutation{set(canary+".duration", "ten minutes")}, canary + ".duration", "should match"},
	{"canary duration zero", validEDS, []mutation{set(canary+".duration", "0m")}, canary + ".duration", "positive duration"},
	{"noRestartsDuration longer than duration", validEDS, []mutation{set(canary+".noRestartsDuration", "20m")}, canary, "noRestartsDuration must not be longer than duration"},
	{"manual validation with duration", validEDS, []mutation{set(canary+".validationMode", "manual"), del(canary + ".noRestartsDuration")}, canary, "duration and noRestartsDuration cannot be set with validationMode manual"},
	{"manual validation with noRestartsDuration", validEDS, []mutation{set(canary+".validationMode", "manual"), del(canary + ".duration"), set(canary+".noRestartsDuration", "1m")}, canary, "validationMode manual"},
	{"validation mode unknown", validEDS, []mutation{set(canary+".validationMode", "sometimes")}, canary + ".validationMode", "Unsupported value"},
	{"autoFail.maxRestarts below autoPause.maxRestarts", validEDS, []mutation{set(canary+".autoFail.maxRestarts", int64(1))}, canary, "autoFail.maxRestarts must be greater than or equal to autoPause.maxRestarts"},
	{"canaryTimeout not longer than duration", validEDS, []mutation{set(canary+".autoFail.canaryTimeout", "10m")}, canary, "autoFail.canaryTimeout must be longer than duration"},
	{"canaryTimeout shorter than the default duration", validEDS, []mutation{del(canary + ".duration"), del(canary + ".noRestartsDuration"), set(canary+".autoFail.canaryTimeout", "5m")}, canary, "10m when unset"},
	{"autoPause.maxRestarts negative", validEDS, []mutation{set(canary+".autoPause.maxRestarts", int64(-1))}, canary + ".autoPause.maxRestarts", "greater than or equal to 0"},
	{"maxSlowStartDuration negative", validEDS, []mutation{set(canary+".autoPause.maxSlowStartDuration", "-1m")}, canary + ".autoPause.maxSlowStartDuration", "should match"},
	{"webhook type unknown", validEDS, []mutation{webhooks(webhook("w", "pre-rollout"))}, canary + ".webhooks[0].type", "Unsupported value"},
	{"webhook name not a DNS label", validEDS, []mutation{webhooks(webhook("Change_Window", "event"))}, canary + ".webhooks[0].name", "should match"},
	{"webhook names not unique", validEDS, []mutation{webhooks(webhook("w", "event"), webhook("w", "rollback"))}, canary + ".webhooks[1]", "Duplicate value"},
	{"webhook without url", validEDS, []mutation{webhooks(map[string]any{"name": "w", "type": "event"})}, canary + ".webhooks[0]", "exactly one of url or urlFrom"},
	{"interval on a notification", validEDS, []mutation{webhooks(webhook("w", "event", "interval", "1m"))}, canary + ".webhooks[0]", "only allowed on confirm-start, confirm-step and confirm-promotion"},
	{"onTimeout on a notification", validEDS, []mutation{webhooks(webhook("w", "rollback", "onTimeout", "Pause"))}, canary + ".webhooks[0]", "only allowed on confirm-start"},
	{"gate interval below 5s", validEDS, []mutation{webhooks(webhook("w", "confirm-step", "interval", "2s"))}, canary + ".webhooks[0].interval", "at least 5s"},
	{"gate timeout zero", validEDS, []mutation{webhooks(webhook("w", "confirm-promotion", "timeout", "0s"))}, canary + ".webhooks[0].timeout", "positive duration"},
	{"gate onTimeout unknown", validEDS, []mutation{webhooks(webhook("w", "confirm-start", "onTimeout", "Ignore"))}, canary + ".webhooks[0].onTimeout", "Unsupported value"},
	{"more than 10 webhooks", validEDS, []mutation{webhooks(elevenWebhooks()...)}, canary + ".webhooks", "must have at most 10 items"},
	{"selector matchLabels not in template", validEDS, []mutation{set("spec.selector.matchLabels", map[string]any{"app": "other"})}, "spec.selector", "selector.matchLabels must match template.metadata.labels"},
	{"selector matchExpressions not met by template", validEDS, []mutation{set("spec.selector.matchExpressions", []any{map[string]any{"key": "tier", "operator": "NotIn", "values": []any{"node"}}})}, "spec.selector", "selector.matchExpressions must match template.metadata.labels"},
	{"selector over template without labels", validEDS, []mutation{del("spec.template.metadata.labels")}, "spec.selector", "must match template.metadata.labels"},
	{"template restartPolicy Never", validEDS, []mutation{set("spec.template.spec.restartPolicy", "Never")}, "spec.template.spec.restartPolicy", "must be Always"},
	{"template pinned to one node", validEDS, []mutation{set("spec.template.spec.nodeName", "node-3")}, "spec.template.spec.nodeName", "must be empty"},
	{"template missing", validEDS, []mutation{del("spec.template")}, "spec.template", "template.spec.containers is required unless workloadRef names the DaemonSet"},
	{"minReadySeconds negative", validEDS, []mutation{set("spec.minReadySeconds", int64(-5))}, "spec.minReadySeconds", "greater than or equal to 0"},
	{"revisionHistoryLimit negative", validEDS, []mutation{set("spec.revisionHistoryLimit", int64(-1))}, "spec.revisionHistoryLimit", "greater than or equal to 0"},
	{"analysis address not http", validEDS, []mutation{set(an+".provider.prometheus.address", "ftp://prometheus:9090")}, an + ".provider.prometheus.address", "http or https URL"},
	{"analysis address not a URL", validEDS, []mutation{set(an+".provider.prometheus.address", "prometheus:9090 ")}, an + ".provider.prometheus.address", "http or https URL"},
	{"analysis provider missing", validEDS, []mutation{del(an + ".provider")}, an, "metrics with a query or preset need provider.prometheus"},
	{"analysis prometheus missing", validEDS, []mutation{set(an+".provider", map[string]any{})}, an, "metrics with a query or preset need provider.prometheus"},
	{"analysis interval below 1s", validEDS, []mutation{set(an+".interval", "500ms")}, an + ".interval", "at least 1s"},
	{"analysis failureLimit negative", validEDS, []mutation{set(an+".failureLimit", int64(-1))}, an + ".failureLimit", "greater than or equal to 0"},
	{"analysis inconclusiveLimit negative", validEDS, []mutation{set(an+".inconclusiveLimit", int64(-2))}, an + ".inconclusiveLimit", "greater than or equal to 0"},
	{"analysis consecutiveErrorLimit negative", validEDS, []mutation{set(an+".consecutiveErrorLimit", int64(-1))}, an + ".consecutiveErrorLimit", "greater than or equal to 0"},
	{"analysis prometheus timeout zero", validEDS, []mutation{set(an+".provider.prometheus.timeout", "0s")}, an + ".provider.prometheus.timeout", "positive duration"},
	{"analysis prometheus timeout beyond the maximum", validEDS, []mutation{set(an+".provider.prometheus.timeout", "31s")}, an + ".provider.prometheus.timeout", "at most 30s"},
	{"analysis without metrics", validEDS, []mutation{metrics()}, an + ".metrics", "should have at least 1 items"},
	{"metric names not unique", validEDS, []mutation{metrics(metric(map[string]any{"preset": "restarts"}), metric(map[string]any{"query": "up"}))}, an + ".metrics[1]", "Duplicate value"},
	{"metric name empty", validEDS, []mutation{metrics(metric(map[string]any{"name": "", "preset": "restarts"}))}, an + ".metrics[0].name", "at least 1 chars"},
	{"metric with query and preset", validEDS, []mutation{metrics(metric(map[string]any{"preset": "restarts", "query": "up"}))}, an + ".metrics[0]", "exactly one of query, preset, web or nodeHealth"},
	{"metric with neither query, preset nor web", validEDS, []mutation{metrics(metric(nil))}, an + ".metrics[0]", "exactly one of query, preset, web or nodeHealth"},
	{"web metric with a query", validEDS, []mutation{metrics(webMetric(nil, map[string]any{"query": "up"}))}, an + ".metrics[0]", "exactly one of query, preset, web or nodeHealth"},
	{"web metric with a baseline", validEDS, []mutation{metrics(webMetric(nil, map[string]any{"baseline": map[string]any{"maxRelativeIncrease": 10.0}}))},
		an + ".metrics[0]", "a web metric has no baseline"},
	{"web metric without thresholdRange", validEDS, []mutation{metrics(webMetric(nil, map[string]any{"thresholdRange": nil}))}, an + ".metrics[0]", "a web metric needs thresholdRange"},
	{"web metric with url and urlFrom", validEDS, []mutation{metrics(webMetric(map[string]any{"urlFrom": map[string]any{"name": "checks", "key": "url"}}, nil))},
		an + ".metrics[0].web", "exactly one of url or urlFrom"},
	{"web metric without a URL", validEDS, []mutation{metrics(webMetric(map[string]any{"url": nil}, nil))}, an + ".metrics[0].web", "exactly one of url or urlFrom"},
	{"web metric URL not http", validEDS, []mutation{metrics(webMetric(map[string]any{"url": "file:///etc/passwd"}, nil))}, an + ".metrics[0].web.url", "url must be an http or https URL with a host"},
	{"web metric URL without host", validEDS, []mutation{metrics(webMetric(map[string]any{"url": "http:///metrics"}, nil))}, an + ".metrics[0].web.url", "url must be an http or https URL with a host"},
	{"web metric urlFrom without a Secret", validEDS, []mutation{metrics(webMetric(map[string]any{"url": nil, "urlFrom": map[string]any{"key": "url"}}, nil))},
		an + ".metrics[0].web.urlFrom", "urlFrom.name must name a Secret"},
	{"web metric headersFrom without a Secret", validEDS, []mutation{metrics(webMetric(map[string]any{"headersFrom": map[string]any{"name": ""}}, nil))},
		an + ".metrics[0].web.headersFrom", "headersFrom.name must name a Secret"},
	{"web metric signingKeyFrom without a key", validEDS, []mutation{metrics(webMetric(map[string]any{"signingKeyFrom": map[string]any{"name": "checks"}}, nil))},
		an + ".metrics[0].web.signingKeyFrom.key", "Required value"},
	{"web metric body with GET", validEDS, []mutation{metrics(webMetric(map[string]any{"body": "{}"}, nil))}, an + ".metrics[0].web", "body is only sent with method POST"},
	{"web metric method PUT", validEDS, []mutation{metrics(webMetric(map[string]any{"method": "PUT"}, nil))}, an + ".metrics[0].web.method", "Unsupported value"},
	{"web metric without jsonPath", validEDS, []mutation{metrics(webMetric(map[string]any{"jsonPath": nil}, nil))}, an + ".metrics[0].web.jsonPath", "Required value"},
	{"web metric requestTimeout beyond the maximum", validEDS, []mutation{metrics(webMetric(map[string]any{"requestTimeout": "31s"}, nil))},
		an + ".metrics[0].web.requestTimeout", "requestTimeout must be at most 30s"},
	{"web metric requestTimeout zero", validEDS, []mutation{metrics(webMetric(map[string]any{"requestTimeout": "0s"}, nil))},
		an + ".metrics[0].web.requestTimeout", "positive duration"},
	{"web metric retries beyond the maximum", validEDS, []mutation{metrics(webMetric(map[string]any{"retries": int64(6)}, nil))},
		an + ".metrics[0].web.retries", "less than or equal to 5"},
	{"metric preset unknown", validEDS, []mutation{metrics(metric(map[string]any{"preset": "latency"}))}, an + ".metrics[0].preset", "Unsupported value"},
	{"errorRate preset without its settings", validEDS, []mutation{metrics(metric(map[string]any{"preset": "errorRate"}))}, an + ".metrics[0]", "preset errorRate needs errorRate"},
	{"thresholdRange min above max", validEDS, []mutation{metrics(metric(map[string]any{"query": "up", "thresholdRange": map[string]any{"min": 2.0, "max": 1.0}}))}, an + ".metrics[0].thresholdRange", "thresholdRange.min must be less than or equal to thresholdRange.max"},
	{"thresholdRange empty", validEDS, []mutation{metrics(metric(map[string]any{"query": "up", "thresholdRange": map[string]any{}}))}, an + ".metrics[0].thresholdRange", "needs min or max"},
	{"baseline without a comparison", validEDS, []mutation{metrics(metric(map[string]any{"query": "up", "baseline": map[string]any{}}))}, an + ".metrics[0].baseline", "maxRelativeIncrease or mannWhitney"},
	{"mann-whitney confidence above 1", validEDS, []mutation{metrics(metric(map[string]any{"query": "up", "baseline": map[string]any{"mannWhitney": map[string]any{"confidence": 1.5}}}))}, an + ".metrics[0].baseline.mannWhitney.confidence", "less than or equal to 0.999"},
	{"baseline relative increase negative", validEDS, []mutation{metrics(metric(map[string]any{"query": "up", "baseline": map[string]any{"maxRelativeIncrease": -1.0}}))}, an + ".metrics[0].baseline.maxRelativeIncrease", "greater than or equal to 0"},
	{"setting without reference name", validSetting, []mutation{set("spec.reference.name", "")}, "spec.reference", "reference.name must name an ExtendedDaemonSet"},
	{"setting without reference", validSetting, []mutation{del("spec.reference")}, "spec.reference", "Required value"},
	{"template without containers nor workloadRef", validEDS, []mutation{del("spec.template.spec.containers")}, "spec.template",
		"template.spec.containers is required unless workloadRef names the DaemonSet"},
	{"template and workloadRef", validEDS, []mutation{del("spec.selector"), set("spec.workloadRef", workloadRef)}, "spec.workloadRef",
		"template and workloadRef cannot both be set"},
	{"workloadRef with a selector", validEDS, []mutation{del("spec.template"), set("spec.workloadRef", workloadRef)}, "spec.selector",
		"selector cannot be set with workloadRef"},
	{"workloadRef with maxSurge", validEDS, []mutation{del("spec.template"), del("spec.selector"), set("spec.workloadRef", workloadRef)},
		"spec.strategy.rollingUpdate.maxSurge", "maxSurge must be 0 with workloadRef"},
	{"workloadRef in place", validEDS, []mutation{del("spec.template"), del("spec.selector"), set("spec.workloadRef", workloadRef),
		set(ru+".maxSurge", int64(0)), set(ru+".type", "InPlaceIfPossible")}, "spec.strategy.rollingUpdate.type", "type must be Standard with workloadRef"},
	{"workloadRef of another kind", validEDS, []mutation{del("spec.template"), del("spec.selector"), set(ru+".maxSurge", int64(0)),
		set("spec.workloadRef", map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "agent"})},
		"spec.workloadRef.kind", "Unsupported value"},
	{"setting container names not unique", validSetting, []mutation{set("spec.containers", []any{
		map[string]any{"name": "agent", "resources": map[string]any{}},
		map[string]any{"name": "agent", "resources": map[string]any{}},
	})}, "spec.containers[1]", "Duplicate value"},
}

func TestInvalidSpecsAreRefusedNamingTheField(t *testing.T) {
	testenv.RequireAssets(t)
	if len(invalidCases) < 30 {
		t.Fatalf("the corpus must hold at least 30 invalid specs, has %d", len(invalidCases))
	}
	ctx := context.Background()
	for _, tc := range invalidCases {
		t.Run(tc.name, func(t *testing.T) {
			obj := fromYAML(t, tc.base)
			for _, change := range tc.changes {
				change(obj.Object)
			}
			err := create(ctx, t, obj)
			if err == nil {
				t.Fatalf("the API server accepted an invalid spec")
			}
			if !apierrors.IsInvalid(err) {
				t.Fatalf("want an Invalid error, got %v", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.field+":") {
				t.Errorf("the error does not name the field %q:\n%s", tc.field, msg)
			}
			if !strings.Contains(msg, tc.message) {
				t.Errorf("the error does not say %q:\n%s", tc.message, msg)
			}
		})
	}
}

func TestValidSpecsAreAccepted(t *testing.T) {
	testenv.RequireAssets(t)
	ctx := context.Background()
	for name, doc := range map[string]string{"eds": validEDS, "setting": validSetting} {
		t.Run(name, func(t *testing.T) {
			if err := create(ctx, t, fromYAML(t, doc)); err != nil {
				t.Fatalf("a valid spec was refused: %v", err)
			}
		})
	}
}

// An analysis of web metrics alone needs no Prometheus.
func TestWebMetricsNeedNoProvider(t *testing.T) {
	testenv.RequireAssets(t)
	obj := fromYAML(t, validEDS)
	for _, change := range []mutation{del(an + ".provider"), metrics(webMetric(nil, nil))} {
		change(obj.Object)
	}
	if err := create(context.Background(), t, obj); err != nil {
		t.Fatalf("an analysis of web metrics without a provider was refused: %v", err)
	}
}

// The original project crashed on a manual canary with a canaryTimeout; here
// it is a valid spec: the timeout bounds the wait for validation.
func TestManualCanaryWithTimeoutIsAccepted(t *testing.T) {
	testenv.RequireAssets(t)
	obj := fromYAML(t, validEDS)
	for _, change := range []mutation{
		set(canary+".validationMode", "manual"), del(canary + ".duration"), del(canary + ".noRestartsDuration"),
		set(canary+".autoFail.canaryTimeout", "2h"),
	} {
		change(obj.Object)
	}
	if err := create(context.Background(), t, obj); err != nil {
		t.Fatalf("a manual canary with a canaryTimeout was refused: %v", err)
	}
}

func TestSelectorIsImmutable(t *testing.T) {
	testenv.RequireAssets(t)
	ctx := context.Background()
	obj := fromYAML(t, validEDS)
	obj.SetName("immutable-selector")
	if err := create(ctx, t, obj); err != nil {
		t.Fatal(err)
	}
	set("spec.selector.matchLabels", map[string]any{"tier": "node"})(obj.Object)
	err := k8s.Update(ctx, obj)
	if err == nil || !strings.Contains(err.Error(), "spec.selector: Invalid value") || !strings.Contains(err.Error(), "selector is immutable") {
		t.Fatalf("want the selector change refused as immutable, got %v", err)
	}
}

// An ExtendedDaemonSet may name the DaemonSet it rolls out instead of
// giving a template, and a client that sends the empty template its Go
// type always has (containers null) is not refused for it; the reference
// cannot change once set.
func TestWorkloadRefIsAcceptedAndImmutable(t *testing.T) {
	testenv.RequireAssets(t)
	ctx := context.Background()
	obj := fromYAML(t, validEDS)
	obj.SetName("workload-ref")
	for _, change := range []mutation{
		set("spec.template", map[string]any{"metadata": map[string]any{"creationTimestamp": nil}, "spec": map[string]any{"containers": nil}}),
		del("spec.selector"), set(ru+".maxSurge", int64(0)), set("spec.workloadRef", workloadRef),
	} {
		change(obj.Object)
	}
	if err := create(ctx, t, obj); err != nil {
		t.Fatalf("an ExtendedDaemonSet naming a DaemonSet was refused: %v", err)
	}
	set("spec.workloadRef.name", "other")(obj.Object)
	err := k8s.Update(ctx, obj)
	if err == nil || !strings.Contains(err.Error(), "workloadRef cannot be added, removed or changed") {
		t.Fatalf("want the reference change refused, got %v", err)
	}
}
