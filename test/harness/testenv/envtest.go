package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// Scheme holds the core kinds and the extendeddaemonset.io kinds.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	return s
}

// Start starts an API server and etcd from AssetsDir and installs the CRDs
// found in crdDirs; a missing directory is an error so that a moved CRD
// cannot silently disable a test. The caller stops the environment. On
// error nothing is left running.
func Start(crdDirs ...string) (*envtest.Environment, *rest.Config, error) {
	dir, err := AssetsDir()
	if err != nil {
		return nil, nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: dir,
		CRDDirectoryPaths:     crdDirs,
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		if stopErr := env.Stop(); stopErr != nil {
			err = errors.Join(err, fmt.Errorf("stopping it: %w", stopErr))
		}
		return nil, nil, fmt.Errorf("starting envtest: %w", err)
	}
	return env, cfg, nil
}

// Run is the body of a TestMain: it starts envtest with the product's CRDs,
// gives run the environment (its Config is the admin's, and it adds users)
// and an admin client with Scheme, and stops everything after. It returns
// the exit code.
func Run(run func(env *envtest.Environment, c client.Client) int) int {
	env, cfg, err := Start(filepath.Join(RepoRoot(), "config", "crd", "bases"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return run(env, c)
}
