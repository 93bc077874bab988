package simcluster

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// Admin client settings: benchmarks drive thousands of objects through this
// config, and client-side throttling would measure the client, not the
// controllers.
const (
	adminQPS   = 200
	adminBurst = 400
)

// credentials are the API server's serving certificate, the admin's bearer
// token and the service-account signing key, written under dir. A static
// token keeps the admin user to one line of configuration; system:masters
// also puts its requests in the exempt priority level, so API Priority and
// Fairness does not throttle a benchmark.
type credentials struct {
	certFile, keyFile, tokenFile, saKeyFile string
	caData                                  []byte
	token                                   string
}

func writeCredentials(dir string) (*credentials, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating credentials directory: %w", err)
	}
	// The certificate chain holds the serving certificate and the CA that
	// signed it, so the same bytes serve as the clients' CA bundle.
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.IPv4(127, 0, 0, 1)}, []string{"localhost"})
	if err != nil {
		return nil, fmt.Errorf("generating serving certificate: %w", err)
	}
	saKeyPEM, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return nil, fmt.Errorf("generating service-account key: %w", err)
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("generating admin token: %w", err)
	}
	c := &credentials{
		certFile:  filepath.Join(dir, "apiserver.crt"),
		keyFile:   filepath.Join(dir, "apiserver.key"),
		tokenFile: filepath.Join(dir, "tokens.csv"),
		saKeyFile: filepath.Join(dir, "sa.key"),
		caData:    certPEM,
		token:     hex.EncodeToString(secret),
	}
	files := map[string][]byte{
		c.certFile:  certPEM,
		c.keyFile:   keyPEM,
		c.saKeyFile: saKeyPEM,
		// token,user,uid,groups
		c.tokenFile: []byte(c.token + ",admin,admin,system:masters\n"),
	}
	for path, data := range files {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return c, nil
}

// adminConfig is the admin's client configuration for the API server at host.
func (c *credentials) adminConfig(host string) *rest.Config {
	return &rest.Config{
		Host:            host,
		BearerToken:     c.token,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.caData},
		QPS:             adminQPS,
		Burst:           adminBurst,
	}
}

// writeKubeconfig writes cfg, which must come from adminConfig, as a
// self-contained kubeconfig file.
func writeKubeconfig(cfg *rest.Config, path string) error {
	const name = "simcluster"
	kc := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{name: {Server: cfg.Host, CertificateAuthorityData: cfg.CAData}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{name: {Token: cfg.BearerToken}},
		Contexts:       map[string]*clientcmdapi.Context{name: {Cluster: name, AuthInfo: name, Namespace: "default"}},
		CurrentContext: name,
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating directory of kubeconfig %s: %w", path, err)
	}
	if err := clientcmd.WriteToFile(kc, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}
