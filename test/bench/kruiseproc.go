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
// Of its controllers, only those whose CRD is installed start, and the
// Advanced DaemonSet's is the only one installed; those that run without a
// CRD (pod readiness, container launch priority) watch pods but act only
// on pods that ask for them.
func (e *environment) startKruise(ctx context.Context, dir string, cfg config, limit rateLimit) (*daemon.Daemon, string, error) {
	for _, webhooks := range []client.Object{
		&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: kruiseMutatingWebhooks}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: kruiseValidatingWebhooks}},
	} {
		if err := e.client.Create(ctx, webhooks); err != nil {
			return nil, "", fmt.Errorf("creating Kruise's empty %s: %w", webhooks.GetName(), err)
		}
	}
	certs := filepath.Join(dir, "kruise-webhook-certs")
	if err := os.MkdirAll(certs, 0o755); err != nil {
		return nil, "", err
	}
	ports, err := daemon.FreePorts(3)
	if err != nil {
		return nil, "", err
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
		return nil, "", err
	}
	// readyz answers once the webhook is, before the controllers start.
	err = d.WaitReady(ctx, daemon.HTTPOK(http.DefaultClient, "http://"+health+"/readyz"))
	if err == nil {
		err = e.waitKruiseReconciles(ctx)
	}
	if err != nil {
		return d, "", fmt.Errorf("kruise: %w; end of its log:\n%s", err, daemon.Tail(d.LogPath(), daemon.TailLines))
	}
	return d, "http://" + metrics + "/metrics", nil
}

// kruiseStartTimeout bounds the wait for Kruise's DaemonSet controller,
// whose informers list every node and pod first.
const kruiseStartTimeout = 2 * time.Minute

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
