package simcluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"

	"github.com/extendeddaemonset/extendeddaemonset/test/internal/daemon"
)

const (
	etcdName       = "etcd"
	apiserverName  = "kube-apiserver"
	schedulerName  = "kube-scheduler"
	controllerName = "kube-controller-manager"
	kwokName       = "kwok"
)

var componentNames = []string{etcdName, apiserverName, schedulerName, controllerName, kwokName}

// healthClient probes the components' own endpoints, served with
// certificates they generate in memory at start-up.
var healthClient = &http.Client{
	Timeout:   2 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // loopback test components
}

func (c *Cluster) start(ctx context.Context) error {
	if err := os.MkdirAll(c.logDir, 0o755); err != nil {
		return fmt.Errorf("creating log directory: %w", err)
	}
	ports, err := daemon.FreePorts(5)
	if err != nil {
		return err
	}
	etcdPort, peerPort, apiPort, schedulerPort, controllerPort := ports[0], ports[1], ports[2], ports[3], ports[4]

	if err := c.startEtcd(ctx, etcdPort, peerPort); err != nil {
		return err
	}
	if err := c.startAPIServer(ctx, etcdPort, apiPort); err != nil {
		return err
	}
	if err := c.startClients(ctx, schedulerPort, controllerPort); err != nil {
		return err
	}
	if len(c.opts.CRDDirs) > 0 {
		_, err := envtest.InstallCRDs(c.config, envtest.CRDInstallOptions{Paths: c.opts.CRDDirs, ErrorIfPathMissing: true})
		if err != nil {
			return fmt.Errorf("installing CRDs: %w", err)
		}
	}
	names := make([]string, c.opts.Nodes)
	for i := range names {
		names[i] = fmt.Sprintf("node-%d", i)
	}
	return c.AddNodes(ctx, names...)
}

func (c *Cluster) startEtcd(ctx context.Context, port, peerPort string) error {
	clientURL, peerURL := "http://127.0.0.1:"+port, "http://127.0.0.1:"+peerPort
	etcd, err := c.startComponent(etcdName, nil,
		"--name=simcluster",
		"--data-dir="+filepath.Join(c.dir, "etcd"),
		"--listen-client-urls="+clientURL,
		"--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=simcluster="+peerURL,
		// The data is thrown away at Stop; fsync would only slow every write.
		"--unsafe-no-fsync=true",
	)
	if err != nil {
		return err
	}
	c.stages = append(c.stages, []*component{etcd})
	return etcd.WaitReady(ctx, daemon.HTTPOK(healthClient, clientURL+"/health"))
}

func (c *Cluster) startAPIServer(ctx context.Context, etcdPort, port string) error {
	creds, err := writeCredentials(filepath.Join(c.dir, "pki"))
	if err != nil {
		return err
	}
	host := "https://127.0.0.1:" + port
	api, err := c.startComponent(apiserverName, nil,
		"--etcd-servers=http://127.0.0.1:"+etcdPort,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port="+port,
		"--cert-dir="+filepath.Join(c.dir, "pki"),
		"--tls-cert-file="+creds.certFile,
		"--tls-private-key-file="+creds.keyFile,
		"--token-auth-file="+creds.tokenFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer="+host,
		"--service-account-key-file="+creds.saKeyFile,
		"--service-account-signing-key-file="+creds.saKeyFile,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--allow-privileged=true",
		// No token controller runs, so pods must not need a service-account
		// token; and fake nodes must not be born with the not-ready taint,
		// since no node lifecycle controller would ever remove it.
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
	)
	if err != nil {
		return err
	}
	c.stages = append(c.stages, []*component{api})

	c.config = creds.adminConfig(host)
	if c.client, err = kubernetes.NewForConfig(c.config); err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	err = api.WaitReady(ctx, func(ctx context.Context) error {
		if err := c.client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error(); err != nil {
			return err
		}
		// Created by the API server shortly after it is ready; most callers
		// create their objects there.
		_, err := c.client.CoreV1().Namespaces().Get(ctx, metav1.NamespaceDefault, metav1.GetOptions{})
		return err
	})
	if err != nil {
		return err
	}
	// The components read a copy the caller cannot overwrite.
	if err := writeKubeconfig(c.config, c.componentKubeconfig()); err != nil || c.kubeconfigPath == c.componentKubeconfig() {
		return err
	}
	return writeKubeconfig(c.config, c.kubeconfigPath)
}

func (c *Cluster) componentKubeconfig() string { return filepath.Join(c.dir, "admin.kubeconfig") }

// startClients starts the scheduler, the controller manager and kwok, which
// only need the API server, and waits for them.
func (c *Cluster) startClients(ctx context.Context, schedulerPort, controllerPort string) error {
	kwokHome := filepath.Join(c.dir, "kwok")
	stagesPath := filepath.Join(kwokHome, "stages.yaml")
	if err := writeKwokStages(stagesPath, c.opts.ImageUpdateDelay, c.opts.KubeletWorkers); err != nil {
		return err
	}
	kubeconfig := "--kubeconfig=" + c.componentKubeconfig()
	specs := []struct {
		name string
		env  []string
		args []string
	}{
		{schedulerName, nil, []string{
			kubeconfig, "--leader-elect=false",
			"--bind-address=127.0.0.1", "--secure-port=" + schedulerPort,
			// Scheduling is the environment, not what is measured: binding a
			// pod per node for thousands of nodes must not wait on the
			// default client rate limit of 50 QPS.
			fmt.Sprintf("--kube-api-qps=%d", adminQPS), fmt.Sprintf("--kube-api-burst=%d", adminBurst),
		}},
		{controllerName, nil, []string{
			kubeconfig, "--leader-elect=false",
			"--bind-address=127.0.0.1", "--secure-port=" + controllerPort,
			"--controllers=" + strings.Join(append([]string{"garbage-collector-controller"}, c.opts.ExtraControllers...), ","),
		}},
		// kwok always reads $HOME/.kwok/kwok.yaml if it exists; a HOME of its
		// own keeps a developer's file out of the cluster.
		{kwokName, []string{"HOME=" + kwokHome}, []string{
			kubeconfig, "--config=" + stagesPath,
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=" + FakeNodeAnnotation + "=fake",
			// Room for a pod IP per pod of a few thousand nodes.
			"--cidr=10.64.0.0/10",
		}},
	}
	// Registered as they start, so that Stop reaches them on any error.
	c.stages = append(c.stages, nil)
	last := len(c.stages) - 1
	for _, s := range specs {
		comp, err := c.startComponent(s.name, s.env, s.args...)
		if err != nil {
			return err
		}
		c.stages[last] = append(c.stages[last], comp)
	}
	// kwok has no probe: Ready nodes, which AddNodes waits for, are its proof.
	if err := c.component(schedulerName).WaitReady(ctx, daemon.HTTPOK(healthClient, "https://127.0.0.1:"+schedulerPort+"/readyz")); err != nil {
		return err
	}
	return c.component(controllerName).WaitReady(ctx, daemon.HTTPOK(healthClient, "https://127.0.0.1:"+controllerPort+"/healthz"))
}

// writeKwokStages writes kwok's own fast stages: nodes turn Ready at once,
// pods bound to them turn Running and Ready, finish when their containers
// would, and go away when deleted; and the kubelet's part in an image
// update of a running pod and in readiness gates (kubeletStages). No
// heartbeat stage: nothing here watches node leases, and at thousands of
// nodes heartbeats are pure load.
// kwokWorkers is a KwokConfiguration with the pod workers given. kwok
// applies no defaults to a configuration read from a file, so the options
// it would default are all set, to its defaults.
const kwokWorkers = `apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  podPlayStageParallelism: %d
  nodePlayStageParallelism: 4
  nodeLeaseParallelism: 4
  podsOnNodeSyncParallelism: 1
  enablePodsOnNodeSyncListPager: true
  enablePodsOnNodeSyncStreamWatch: false
  enableDebuggingHandlers: true
  enableContentionProfiling: false
  enableProfilingHandler: true
`

func writeKwokStages(path string, imageUpdateDelay time.Duration, workers int) error {
	docs := []string{
		nodefast.DefaultNodeInit,
		podfast.DefaultPodReady, podfast.DefaultPodComplete, podfast.DefaultPodDelete,
		kubeletStagesYAML(imageUpdateDelay),
	}
	if workers > 0 {
		docs = append(docs, fmt.Sprintf(kwokWorkers, workers))
	}
	stages := strings.Join(docs, "\n---\n")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating kwok directory: %w", err)
	}
	if err := os.WriteFile(path, []byte(stages), 0o644); err != nil {
		return fmt.Errorf("writing kwok stages: %w", err)
	}
	return nil
}
