package monitoring

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

const (
	metricsServiceName = "eds-controller-manager-metrics"
	metricsPortName    = "https-metrics"
	serviceAccountPath = "/var/run/secrets/kubernetes.io/serviceaccount/token"
)

// serviceMonitor is the part of a monitoring.coreos.com/v1 ServiceMonitor
// the scrape depends on.
type serviceMonitor struct {
	JobLabel          string               `json:"jobLabel"`
	Selector          metav1.LabelSelector `json:"selector"`
	NamespaceSelector *struct {
		Any        bool     `json:"any"`
		MatchNames []string `json:"matchNames"`
	} `json:"namespaceSelector"`
	Endpoints []struct {
		Port            string `json:"port"`
		Path            string `json:"path"`
		Scheme          string `json:"scheme"`
		BearerTokenFile string `json:"bearerTokenFile"`
		HonorLabels     bool   `json:"honorLabels"`
		TLSConfig       struct {
			InsecureSkipVerify bool `json:"insecureSkipVerify"`
			CA                 any  `json:"ca"`
		} `json:"tlsConfig"`
	} `json:"endpoints"`
}

type servicePort struct {
	Name string `json:"name"`
}

// The ServiceMonitor selects the metrics Service config/default installs,
// in its namespace, on its HTTPS port, with the credentials the controller's
// authorization asks for, and names the job the alerts and panels select.
// The Prometheus Operator's kinds are not installed in the test API server,
// so the shape is checked here rather than by applying it.
func TestServiceMonitorScrapesTheMetricsService(t *testing.T) {
	monObj := only(t, renderKinds(t, monitoringDir), "ServiceMonitor")
	if monObj.GetAPIVersion() != "monitoring.coreos.com/v1" {
		t.Errorf("ServiceMonitor apiVersion %q", monObj.GetAPIVersion())
	}
	var mon serviceMonitor
	fromUnstructured(t, monObj.Object["spec"], &mon)
	svc := only(t, renderKinds(t, defaultDir), "Service")
	if svc.GetName() != metricsServiceName {
		t.Fatalf("config/default renders Service %s, want %s", svc.GetName(), metricsServiceName)
	}

	if monObj.GetNamespace() != svc.GetNamespace() {
		t.Errorf("ServiceMonitor in namespace %q, the metrics Service in %q", monObj.GetNamespace(), svc.GetNamespace())
	}
	if ns := mon.NamespaceSelector; ns != nil && !ns.Any && len(ns.MatchNames) > 0 && !slices.Contains(ns.MatchNames, svc.GetNamespace()) {
		t.Errorf("namespaceSelector %+v leaves out the Service's namespace %s", *ns, svc.GetNamespace())
	}
	sel, err := metav1.LabelSelectorAsSelector(&mon.Selector)
	if err != nil {
		t.Fatalf("ServiceMonitor selector: %v", err)
	}
	if sel.Empty() || !sel.Matches(labels.Set(svc.GetLabels())) {
		t.Errorf("ServiceMonitor selector %q does not match the metrics Service's labels %v", sel, svc.GetLabels())
	}
	if job := svc.GetLabels()[mon.JobLabel]; job != controllerJob {
		t.Errorf("jobLabel %q gives job %q, the rules and dashboard select job %q", mon.JobLabel, job, controllerJob)
	}

	// Through JSON: the rendered maps hold ints, which unstructured's
	// accessors refuse.
	var svcSpec struct {
		Ports []servicePort `json:"ports"`
	}
	fromUnstructured(t, svc.Object["spec"], &svcSpec)
	if !slices.ContainsFunc(svcSpec.Ports, func(p servicePort) bool { return p.Name == metricsPortName }) {
		t.Fatalf("the metrics Service has no port %s: %+v", metricsPortName, svcSpec.Ports)
	}
	if len(mon.Endpoints) != 1 {
		t.Fatalf("want one endpoint, got %d", len(mon.Endpoints))
	}
	ep := mon.Endpoints[0]
	if ep.Port != metricsPortName || ep.Scheme != "https" || ep.Path != "/metrics" {
		t.Errorf("endpoint scrapes %s://:%s%s, want https://:%s/metrics", ep.Scheme, ep.Port, ep.Path, metricsPortName)
	}
	if ep.BearerTokenFile != serviceAccountPath {
		t.Errorf("bearerTokenFile %q, want the Prometheus service account's token %s", ep.BearerTokenFile, serviceAccountPath)
	}
	if !ep.TLSConfig.InsecureSkipVerify && ep.TLSConfig.CA == nil {
		t.Error("tlsConfig neither trusts a CA nor skips verification: the controller's self-signed certificate would fail every scrape")
	}
	if !ep.HonorLabels {
		t.Error("honorLabels is off: the target's namespace would replace the ExtendedDaemonSet's namespace label")
	}
}

// The PrometheusRule lives with the controller and every alert says how bad
// it is, what happened, and to which ExtendedDaemonSet.
func TestAlertsAreDescribed(t *testing.T) {
	byKind := renderKinds(t, monitoringDir)
	rule := only(t, byKind, "PrometheusRule")
	if rule.GetAPIVersion() != "monitoring.coreos.com/v1" || rule.GetNamespace() != only(t, byKind, "ServiceMonitor").GetNamespace() {
		t.Errorf("PrometheusRule %s/%s %s: want monitoring.coreos.com/v1 beside the ServiceMonitor", rule.GetNamespace(), rule.GetName(), rule.GetAPIVersion())
	}
	for _, g := range ruleGroups(t) {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			if !slices.Contains([]string{"critical", "warning", "info"}, r.Labels["severity"]) {
				t.Errorf("alert %s: severity %q", r.Alert, r.Labels["severity"])
			}
			for _, key := range []string{"summary", "description"} {
				if strings.TrimSpace(r.Annotations[key]) == "" {
					t.Errorf("alert %s has no %s", r.Alert, key)
				}
			}
			// absent() returns no labels to name anything by.
			if strings.HasPrefix(strings.TrimSpace(r.Expr), "absent(") {
				continue
			}
			for _, ref := range []string{"{{ $labels.namespace }}", "{{ $labels.name }}"} {
				if !strings.Contains(r.Annotations["description"], ref) {
					t.Errorf("alert %s: the description does not name the ExtendedDaemonSet with %s", r.Alert, ref)
				}
			}
		}
	}
}

// The dashboard ships in a ConfigMap Grafana's sidecar loads, byte for byte,
// and every panel reads the data source the user picks.
func TestDashboardConfigMap(t *testing.T) {
	byKind := renderKinds(t, monitoringDir)
	cm := only(t, byKind, "ConfigMap")
	if cm.GetLabels()["grafana_dashboard"] != "1" {
		t.Errorf("dashboard ConfigMap labels %v lack grafana_dashboard: \"1\"", cm.GetLabels())
	}
	if cm.GetNamespace() != only(t, byKind, "ServiceMonitor").GetNamespace() {
		t.Errorf("dashboard ConfigMap in namespace %q", cm.GetNamespace())
	}
	data, _, err := unstructured.NestedStringMap(cm.Object, "data")
	if err != nil || len(data) != 1 {
		t.Fatalf("want the dashboard as the one key of the ConfigMap's data, got %d keys (%v)", len(data), err)
	}
	for key, content := range data {
		if !strings.HasSuffix(key, ".json") {
			t.Errorf("key %q: the sidecar writes it as a file and Grafana loads *.json", key)
		}
		if !bytes.Equal([]byte(content), readFile(t, repoPath(monitoringDir+"/"+dashboardFile))) {
			t.Errorf("ConfigMap key %s differs from %s", key, dashboardFile)
		}
	}

	d := loadDashboard(t)
	if d.UID == "" || d.Title == "" {
		t.Errorf("dashboard uid %q, title %q: both are needed for a stable URL", d.UID, d.Title)
	}
	vars := map[string]variable{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v
	}
	if ds := vars["datasource"]; ds.Type != "datasource" || string(ds.Query) != `"prometheus"` {
		t.Errorf("want a datasource variable of Prometheus data sources, got %+v", ds)
	}
	for _, name := range []string{"namespace", "name"} {
		if v, ok := vars[name]; !ok || v.Type != "query" || !usesDatasourceVariable(v.Datasource) {
			t.Errorf("want a query variable %s on $datasource, got %+v", name, v)
		}
	}
	for _, p := range allPanels(d.Panels) {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		if !usesDatasourceVariable(p.Datasource) {
			t.Errorf("panel %q data source %s is not $datasource", p.Title, p.Datasource)
		}
		for _, target := range p.Targets {
			if strings.TrimSpace(target.Expr) == "" || !usesDatasourceVariable(target.Datasource) {
				t.Errorf("panel %q query %s: empty, or not on $datasource", p.Title, target.RefID)
			}
		}
	}
}

func usesDatasourceVariable(raw json.RawMessage) bool {
	var ds struct {
		UID string `json:"uid"`
	}
	return json.Unmarshal(raw, &ds) == nil && (ds.UID == "${datasource}" || ds.UID == "$datasource")
}

// config/default installs on clusters without the Prometheus Operator: it
// must not carry its kinds.
func TestDefaultLeavesMonitoringOut(t *testing.T) {
	for kind, objs := range renderKinds(t, defaultDir) {
		for _, obj := range objs {
			if strings.HasPrefix(obj.GetAPIVersion(), "monitoring.coreos.com/") || obj.GetLabels()["grafana_dashboard"] != "" {
				t.Errorf("config/default renders %s %s from config/prometheus", kind, obj.GetName())
			}
		}
	}
}
