package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/template"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// rolloutTimeout bounds the first rollout of the live demo.
const rolloutTimeout = 2 * time.Minute

// runLive brings the environment up, rolls v1 out, starts v2 as a canary,
// prints what to type next and runs until ctx ends.
func runLive(ctx context.Context, opts options) error {
	return withEnvironment(ctx, opts, opts.kubeconfig, func(env *environment) error {
		prom := env.prom.URL()
		logf("rolling out the demo agent v1")
		if err := apply(ctx, env.client, version{Number: 1}, prom); err != nil {
			return err
		}
		if err := waitRolledOut(ctx, env.client, rolloutTimeout); err != nil {
			return err
		}
		logf("v1 runs on every node; starting v2 as a canary")
		if err := apply(ctx, env.client, version{Number: 2}, prom); err != nil {
			return err
		}
		if err := nextSteps.Execute(os.Stdout, map[string]any{
			"Nodes": opts.nodes, "Zones": strings.Join(zones, " and "), "Prometheus": prom,
			"Kubeconfig": env.cluster.KubeconfigPath(), "ManagerLog": env.managerLog(), "Name": demoName,
		}); err != nil {
			return fmt.Errorf("printing the next steps: %w", err)
		}
		<-ctx.Done()
		return nil
	})
}

var nextSteps = template.Must(template.New("next").Parse(`
ExtendedDaemonSet demo ready: {{.Nodes}} fake nodes in {{.Zones}}, the controller
(log: {{.ManagerLog}}), and Prometheus at {{.Prometheus}}
judging the demo agent. v1 runs on every node; v2 is a canary on 2 nodes,
judged for 30s, then promoted zone by zone (zone-a judged for 15s first).

In another terminal:

  export KUBECONFIG={{.Kubeconfig}}
  export PATH=$PWD/bin:$PATH          # kubectl-eds, which kubectl runs as "kubectl eds"
  kubectl eds status {{.Name}} --watch     # follow the rollout
  kubectl get eds,ers,pods -o wide

Start a good rollout (canary judged healthy, then promoted):

  kubectl patch eds {{.Name}} --type=json -p '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"demo-agent:v3"}]'

Start a bad one (this version fails 30% of its requests; the analysis fails
the canary and its nodes go back to the stable version):

  kubectl patch eds {{.Name}} --type=json -p '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"demo-agent:v4"},{"op":"replace","path":"/spec/template/spec/containers/0/env/0/value","value":"0.3"}]'

Then: kubectl eds canary retry {{.Name}}, kubectl eds rollback {{.Name}}, or make demo
for the whole story. Ctrl-C stops everything.
`))

// waitRolledOut waits until the demo is Ready at its latest generation,
// with no canary.
func waitRolledOut(ctx context.Context, c client.Client, timeout time.Duration) error {
	return waitForDemo(ctx, c, "the demo to roll out", timeout, func(eds *v1alpha1.ExtendedDaemonSet) bool {
		ready := apimeta.FindStatusCondition(eds.Status.Conditions, v1alpha1.ReadyCondition)
		return eds.Status.ObservedGeneration == eds.Generation && eds.Status.Canary == nil &&
			ready != nil && ready.Status == metav1.ConditionTrue
	})
}

// waitForDemo waits until done holds for the demo ExtendedDaemonSet; on
// timeout it says what the demo's Ready condition said last.
func waitForDemo(ctx context.Context, c client.Client, what string, timeout time.Duration, done func(*v1alpha1.ExtendedDaemonSet) bool) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		eds := &v1alpha1.ExtendedDaemonSet{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: demoNamespace, Name: demoName}, eds); err != nil {
			last = err.Error()
			return false, nil //nolint:nilerr // a transient read error; the timeout tells a lasting one
		}
		if ready := apimeta.FindStatusCondition(eds.Status.Conditions, v1alpha1.ReadyCondition); ready != nil {
			last = ready.Reason + ": " + ready.Message
		}
		return done(eds), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s (last seen: %s): %w", what, last, err)
	}
	return nil
}
