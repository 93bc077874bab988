package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ServiceAccountConfig returns a configuration for admin's API server
// authenticated as the ServiceAccount namespace/name, with a token from the
// TokenRequest API valid for ttl: what the kubelet mounts into the
// manager's pod.
func ServiceAccountConfig(ctx context.Context, admin *rest.Config, namespace, name string, ttl time.Duration) (*rest.Config, error) {
	kube, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return nil, err
	}
	seconds := int64(ttl.Seconds())
	req, err := kube.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("requesting a token for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	return &rest.Config{
		Host:            admin.Host,
		TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData, CAFile: admin.CAFile, ServerName: admin.ServerName},
		BearerToken:     req.Status.Token,
	}, nil
}

// WriteKubeconfig writes cfg's server, CA and bearer token as a
// self-contained kubeconfig.
func WriteKubeconfig(cfg *rest.Config, path string) error {
	const name = "chaos"
	kc := clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{name: {
			Server: cfg.Host, CertificateAuthorityData: cfg.CAData, CertificateAuthority: cfg.CAFile, TLSServerName: cfg.ServerName,
		}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{name: {Token: cfg.BearerToken}},
		Contexts:       map[string]*clientcmdapi.Context{name: {Cluster: name, AuthInfo: name}},
		CurrentContext: name,
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating the directory of kubeconfig %s: %w", path, err)
	}
	return clientcmd.WriteToFile(kc, path)
}
