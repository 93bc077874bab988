package clitest

import (
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// KubeconfigOf writes a kubeconfig of the user name, who may do only what
// RBAC grants name or groups, for commands run with a second --kubeconfig
// (the last one given wins).
func (e *Env) KubeconfigOf(t testing.TB, name string, groups ...string) string {
	t.Helper()
	user, err := e.envtest.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		t.Fatalf("adding user %s: %v", name, err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := writeKubeconfig(user.Config(), path); err != nil {
		t.Fatal(err)
	}
	return path
}
