// Command chartsync keeps the Helm chart in config/helm/extendeddaemonset
// in step with what config/ generates, so that the chart and
// `kubectl apply -k config/default` install the same thing:
//
//	go run ./test/chartsync [-config config] [-chart config/helm/extendeddaemonset] [-readme README.md]
//
// It copies into the chart, each copy marked generated:
//   - config/crd/bases/*.yaml into crds/, with the part-of label
//     config/default gives every object (Helm renders no template in crds/);
//   - the rules of the manager's ClusterRole (config/rbac/role.yaml, which
//     controller-gen writes from the controllers' markers) into files/;
//   - the spec of the alerts (config/prometheus/rules.yaml) and the Grafana
//     dashboard (config/prometheus/dashboard.json) into files/, which the
//     templates read with .Files.Get: the alerts' annotations hold
//     Prometheus's own {{ $labels }} templates, which Helm must not render.
//
// Then it writes the chart's values table into the README between its two
// markers, from the descriptions of values.schema.json and the defaults of
// values.yaml. `make manifests` runs it after controller-gen and crdtrim,
// so `make verify` fails on a stale copy or table. The objects the chart
// renders from templates are compared with config/default by test/helm.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	config := flag.String("config", "config", "the kustomize bases the chart copies from")
	chart := flag.String("chart", filepath.Join("config", "helm", "extendeddaemonset"), "the chart directory")
	readme := flag.String("readme", "README.md", "the Markdown file holding the values table between its markers")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: chartsync [-config DIR] [-chart DIR] [-readme FILE]")
		os.Exit(2)
	}
	if err := run(*config, *chart, *readme); err != nil {
		fmt.Fprintln(os.Stderr, "chartsync:", err)
		os.Exit(1)
	}
}

func run(config, chart, readme string) error {
	if err := syncCRDs(filepath.Join(config, "crd", "bases"), filepath.Join(chart, "crds")); err != nil {
		return err
	}
	if err := syncRules(filepath.Join(config, "rbac", "role.yaml"), filepath.Join(chart, "files", "manager-rules.yaml")); err != nil {
		return err
	}
	if err := syncAlerts(filepath.Join(config, "prometheus", "rules.yaml"), filepath.Join(chart, "files", "prometheus-rules.yaml")); err != nil {
		return err
	}
	if err := copyFile(filepath.Join(config, "prometheus", "dashboard.json"), filepath.Join(chart, "files", "dashboard.json")); err != nil {
		return err
	}
	return writeValuesTable(chart, readme)
}
