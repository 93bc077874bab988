package harness

import (
	"errors"
	"fmt"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// StartEnvtest starts an API server and etcd from AssetsDir and installs the
// CRDs found in crdDirs; a missing directory is an error so that a moved CRD
// cannot silently disable a test. The caller stops the environment. On error
// nothing is left running.
func StartEnvtest(crdDirs ...string) (*envtest.Environment, *rest.Config, error) {
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
