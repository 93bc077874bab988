package steer_test

import (
	"fmt"
	"testing"

	"github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/clitest"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/steer"
)

// A user who may read ExtendedDaemonSets but not change them is told so,
// and how to find out what they may do.
func TestSteeringWithoutTheRightToPatchIsRefused(t *testing.T) {
	t.Parallel()
	s := env.NewScenario(t)
	s.Create(s.NewExtendedDaemonSet(name, "agent:v1"))
	user := "viewer-" + s.Namespace
	s.Create(&rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "eds-viewer", Namespace: s.Namespace},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{v1alpha1.GroupVersion.Group},
			Resources: []string{"extendeddaemonsets", "extendeddaemonsetreplicasets"},
			Verbs:     []string{"get", "list", "watch"},
		}},
	})
	s.Create(&rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "eds-viewer", Namespace: s.Namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "eds-viewer"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	})
	viewer := env.KubeconfigOf(t, user)
	runAsViewer := func(args ...string) clitest.Result {
		return env.Run(t, []cli.Group{steer.Commands}, append([]string{"--kubeconfig", viewer, "-n", s.Namespace}, args...)...)
	}

	expectRefused(s, runAsViewer("freeze", name),
		fmt.Sprintf("not allowed: extendeddaemonsets.extendeddaemonset.io %q is forbidden: User %q cannot patch resource", name, user))
	expectRefused(s, runAsViewer("freeze", name), fmt.Sprintf("`kubectl auth can-i --list -n %s` shows what your user may do", s.Namespace))
	s.G.Expect(annotations(s)).NotTo(gomega.HaveKey(v1alpha1.RolloutFrozenAnnotation))
	s.G.Expect(runAsViewer("history", name).Code).To(gomega.Equal(cli.ExitOK), "reading is allowed")
}

func TestArgumentsAndCompletion(t *testing.T) {
	t.Parallel()
	s := env.NewScenario(t)
	s.Create(s.NewExtendedDaemonSet(name, "agent:v1"))

	expectRefused(s, run(s, "canary", "validate"), "expects the name of one ExtendedDaemonSet, got 0 arguments: `kubectl eds get` lists them")
	expectRefused(s, run(s, "rollback", name, "--to-revision", "-1"), "--to-revision -1: revisions are numbered from 1")

	for _, args := range [][]string{{"canary", "validate"}, {"freeze"}, {"history"}, {"rollback"}, {"diff"}} {
		r := run(s, append(append([]string{"__complete"}, args...), "ag")...)
		s.G.Expect(r.Out).To(gomega.HavePrefix(name+"\n"), "completing %v", args)
	}
}
