package notifications

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/daemon"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/kubeapply"
)

// postedEvent is the part of a Flux event (eventv1.Event, as posted by
// the manager and as the generic provider forwards it) the test reads.
type postedEvent struct {
	InvolvedObject struct {
		Kind, Namespace, Name, APIVersion string
	} `json:"involvedObject"`
	Severity            string            `json:"severity"`
	Reason              string            `json:"reason"`
	Message             string            `json:"message"`
	Metadata            map[string]string `json:"metadata"`
	ReportingController string            `json:"reportingController"`
}

// recorder collects the events posted to it.
type recorder struct {
	mu     sync.Mutex
	events []postedEvent
}

// record decodes and keeps the body of r; a body that is not an event is
// kept empty, so the test sees it.
func (rec *recorder) record(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	var e postedEvent
	_ = json.Unmarshal(body, &e)
	rec.mu.Lock()
	rec.events = append(rec.events, e)
	rec.mu.Unlock()
	return body, nil
}

// withReason returns the events of reason recorded so far.
func (rec *recorder) withReason(reason string) []postedEvent {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []postedEvent
	for _, e := range rec.events {
		if e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// reasons lists the reasons of every event recorded so far, for messages.
func (rec *recorder) reasons() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := make([]string, 0, len(rec.events))
	for _, e := range rec.events {
		out = append(out, e.Reason)
	}
	return out
}

// startReceiver is the generic Provider's address: it records every event
// the notification-controller forwards.
func startReceiver(t *testing.T) (*httptest.Server, *recorder) {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := rec.record(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

// startRecordingProxy forwards to target and records what it forwards.
func startRecordingProxy(t *testing.T, target string) (*httptest.Server, *recorder) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := rec.record(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

// notificationController is the notification-controller of KUBEBUILDER_ASSETS
// running against the cluster of kubeconfig; it returns the address of its
// event receiver.
func startNotificationController(ctx context.Context, t *testing.T, kubeconfig, logDir string) string {
	t.Helper()
	bin, err := testenv.AssetPath("notification-controller")
	if err != nil {
		t.Fatal(err)
	}
	ports, err := daemon.FreePorts(4)
	if err != nil {
		t.Fatal(err)
	}
	events, health := "127.0.0.1:"+ports[0], "127.0.0.1:"+ports[2]
	d, err := daemon.Start(daemon.Spec{
		Name: "notification-controller",
		Path: bin,
		Args: []string{
			"--events-addr=" + events,
			"--metrics-addr=127.0.0.1:" + ports[1],
			"--health-addr=" + health,
			"--receiverAddr=127.0.0.1:" + ports[3],
			"--enable-leader-election=false",
			"--log-level=debug",
		},
		Env:     []string{"KUBECONFIG=" + kubeconfig},
		LogPath: filepath.Join(logDir, "notification-controller.log"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Stop(5 * time.Second); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("notification-controller log:\n%s", daemon.Tail(d.LogPath(), 40))
		}
	})
	if err := d.WaitReady(ctx, daemon.HTTPOK(http.DefaultClient, "http://"+health+"/readyz")); err != nil {
		t.Fatal(err)
	}
	return "http://" + events
}

// installFluxCRDs applies the notification-controller's CRDs, patched by
// kustomize/flux-notifications as a Flux install would include it, and
// whatever else the component adds.
func installFluxCRDs(ctx context.Context, t *testing.T, c client.Client) {
	t.Helper()
	assets, err := testenv.AssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	crds := filepath.Join(assets, "notification-controller-crds")
	files, err := filepath.Glob(filepath.Join(crds, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no notification-controller CRDs in %s (%v): run test/tools/testbin.sh", crds, err)
	}
	dir := t.TempDir()
	kustomization := "resources:\n"
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
		kustomization += "- " + filepath.Base(f) + "\n"
	}
	// kustomize refuses an absolute path to a component.
	component, err := filepath.Rel(dir, filepath.Join(testenv.RepoRoot(), "kustomize", "flux-notifications"))
	if err != nil {
		t.Fatal(err)
	}
	kustomization += "components:\n- " + component + "\n"
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
		t.Fatal(err)
	}
	objs, err := kubeapply.Render(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if err := kubeapply.ClientSide(ctx, c, obj); err != nil {
			t.Fatal(err)
		}
		if obj.GetKind() == "CustomResourceDefinition" {
			waitEstablished(ctx, t, c, obj.GetName())
		}
	}
}

func waitEstablished(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return false, nil //nolint:nilerr // the API server may not serve it yet
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("CRD %s not established: %v", name, err)
	}
}

// fluxObject is a notification.toolkit.fluxcd.io/v1beta3 object.
func fluxObject(kind, namespace, name string, spec map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	obj.SetAPIVersion("notification.toolkit.fluxcd.io/v1beta3")
	obj.SetKind(kind)
	obj.SetNamespace(namespace)
	obj.SetName(name)
	return obj
}

// createAlert creates a generic Provider posting to address and an Alert
// sending it the error events of every ExtendedDaemonSet and replica set
// of namespace.
func createAlert(ctx context.Context, t *testing.T, c client.Client, namespace, address string) {
	t.Helper()
	provider := fluxObject("Provider", namespace, "receiver", map[string]any{"type": "generic", "address": address})
	alert := fluxObject("Alert", namespace, "rollouts", map[string]any{
		"providerRef":   map[string]any{"name": "receiver"},
		"eventSeverity": "error",
		"eventSources": []any{
			map[string]any{"kind": "ExtendedDaemonSet", "name": "*"},
			map[string]any{"kind": "ExtendedDaemonSetReplicaSet", "name": "*"},
		},
	})
	for _, obj := range []*unstructured.Unstructured{provider, alert} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
}

// describe shows events in a failure message.
func describe(events []postedEvent) string {
	out, err := json.MarshalIndent(events, "", "  ")
	if err != nil {
		return fmt.Sprint(events)
	}
	return string(out)
}
