package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/test/internal/daemon"
)

// What test/tools/kruise.sh puts in its directory.
const (
	kruiseManager = "manager"
	kruiseCRD     = "crds/apps.kruise.io_daemonsets.yaml"
)

// kruiseReconciler is the controller-runtime name of Kruise's DaemonSet
// controller, whose reconcile times are reported; a reconcile includes its
// writes, which wait on the client's rate limit.
const kruiseReconciler = "daemonset-controller"

// kruiseAgent is the user agent of every client of Kruise's manager: its
// own, and "kruise-manager/<name>" for the clients it names.
var kruiseAgent = userAgent{prefix: "kruise-manager"}

// The webhook configurations Kruise's manager fills in with its webhooks.
// It refuses to start its controllers until it has found both.
const (
	kruiseMutatingWebhooks   = "kruise-mutating-webhook-configuration"
	kruiseValidatingWebhooks = "kruise-validating-webhook-configuration"
)

// kruiseStopGrace is how long Kruise's manager has to stop on SIGTERM.
const kruiseStopGrace = 10 * time.Second

// startKruise runs Kruise's manager of cfg.kruiseDir against the cluster
// with the client rate limit limit, its webhook left out, and returns once
// its DaemonSet controller reconciles.
//
// Kruise has no flag to run without its webhook: its manager starts its
// controllers only once its webhook server answers with certificates it
// made and both its webhook configurations exist. WEBHOOK_HOST makes it
// write the certificates to a directory rather than to a Secret, and the
// configurations are created empty, without a template: the manager finds
// them, has no webhook to put in them, and the API server never calls it.
// Of its controllers, only those whose CRD is installed start, and of
// those the feature gates below turn every one off but the DaemonSet
// controller; those that run without a CRD (pod readiness, container
// launch priority) watch pods but act only on pods that ask for them. The
// manager looks for the CRDs not installed for 16 seconds each, about
// three minutes in all, before and after it starts its DaemonSet
// controller: startKruise returns once it has gone quiet.
func (e *environment) startKruise(ctx context.Context, dir string, cfg config, limit rateLimit) error {
	for _, webhooks := range []client.Object{
		&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: kruiseMutatingWebhooks}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: kruiseValidatingWebhooks}},
	} {
		if err := e.client.Create(ctx, webhooks); err != nil {
			return fmt.Errorf("creating Kruise's empty %s: %w", webhooks.GetName(), err)
		}
	}
	certs := filepath.Join(dir, "kruise-webhook-certs")
	if err := os.MkdirAll(certs, 0o755); err != nil {
		return err
	}
	ports, err := daemon.FreePorts(3)
	if err != nil {
		return err
	}
	metrics, health := "127.0.0.1:"+ports[0], "127.0.0.1:"+ports[1]
	d, err := daemon.Start(daemon.Spec{
		Name: "kruise-manager",
		Path: filepath.Join(cfg.kruiseDir, kruiseManager),
		Args: []string{
			"--metrics-addr=" + metrics,
			"--health-probe-addr=" + health,
			"--enable-leader-election=false",
			"--enable-pprof=false",
			// No kruise-daemon runs on the fake nodes: the features that
			// need it (image pre-download, container restarts, probes)
			// are off. Pod unavailable budgets and workload spreads are
			// off too: with these gates, the DaemonSet controller is the
			// only one of the installed CRDs' that runs.
			"--feature-gates=KruiseDaemon=false,PodUnavailableBudgetDeleteGate=false,WorkloadSpread=false",
			"--rest-config-qps=" + strconv.Itoa(limit.qps),
			"--rest-config-burst=" + strconv.Itoa(limit.burst),
		},
		Env: []string{
			"KUBECONFIG=" + e.cluster.KubeconfigPath(),
			"WEBHOOK_HOST=localhost",
			"WEBHOOK_PORT=" + ports[2],
			"WEBHOOK_CERT_DIR=" + certs,
		},
		LogPath: filepath.Join(dir, "kruise-manager.log"),
	})
	if err != nil {
		return err
	}
	e.kruiseManager = d
	e.kruise = &controller{
		name: kruise, pid: d.PID,
		metricsURL:     "http://" + metrics + "/metrics",
		requestCounter: "rest_client_requests_total", keyOf: requestKeyByMethod,
		agent:       kruiseAgent,
		reconcilers: []string{kruiseReconciler},
		ownKinds:    []string{"daemonsets", "controllerrevisions"},
		newWorkload: func(scenario) workload { return &kruiseDaemonSet{c: e.client} },
	}
	// readyz answers once the webhook is, before the controllers start.
	if err := d.WaitReady(ctx, daemon.HTTPOK(http.DefaultClient, "http://"+health+"/readyz")); err != nil {
		return err
	}
	err = e.waitKruiseReconciles(ctx)
	if err == nil {
		err = e.kruise.waitQuietFor(ctx, kruiseQuietFor, kruiseStartTimeout)
	}
	if err != nil {
		return fmt.Errorf("%w; end of the log of kruise-manager:\n%s", err, daemon.Tail(d.LogPath(), daemon.TailLines))
	}
	return nil
}

// kruiseStartTimeout bounds the wait for Kruise's DaemonSet controller,
// and then for the manager to go quiet: kruiseQuietFor is longer than the
// longest wait between two of its looks for a CRD, 12.5 seconds.
const (
	kruiseStartTimeout = 5 * time.Minute
	kruiseQuietFor     = 20 * time.Second
)

// waitKruiseReconciles waits until Kruise's DaemonSet controller has
// written the status of an Advanced DaemonSet that selects no node, and
// deletes it, so that the first measurement does not wait for the
// controller's start.
func (e *environment) waitKruiseReconciles(ctx context.Context) error {
	ns := "kruise-warm-up"
	if err := e.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	w := &kruiseDaemonSet{c: e.client}
	spec := kruiseSpec(scenarios[0], "v1")
	spec.Template.Spec.NodeSelector = map[string]string{"kruise-warm-up": "no-such-node"}
	if err := w.createSpec(ctx, ns, spec); err != nil {
		return err
	}
	err := wait.PollUntilContextTimeout(ctx, pollEvery, kruiseStartTimeout, true, func(ctx context.Context) (bool, error) {
		s, generation, err := w.status(ctx)
		return s.ObservedGeneration == generation, err
	})
	if err != nil {
		return fmt.Errorf("the DaemonSet controller of kruise wrote no status in %s: %w", kruiseStartTimeout, err)
	}
	return errors.Join(w.deleteAll(ctx), e.client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
}
