package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

func TestExitCodes(t *testing.T) {
	g := gomega.NewWithT(t)
	g.Expect(ExitCode(nil)).To(gomega.Equal(ExitOK))
	g.Expect(ExitCode(errors.New("boom"))).To(gomega.Equal(ExitFailed))
	g.Expect(ExitCode(fmt.Errorf("watching: %w", &ExitError{Code: ExitTimeout}))).To(gomega.Equal(ExitTimeout), "wrapped")
	g.Expect((&ExitError{Code: ExitTimeout, Err: errors.New("still in progress")}).Error()).To(gomega.Equal("still in progress"))
}

// Each error says what is wrong and the command to run next.
func TestExplainSaysWhatToDoNext(t *testing.T) {
	g := gomega.NewWithT(t)
	key := types.NamespacedName{Namespace: "agents", Name: "agent"}
	gr := schema.GroupResource{Group: "extendeddaemonset.io", Resource: "extendeddaemonsets"}

	err := Explain(apierrors.NewNotFound(gr, "agent"), "ExtendedDaemonSet", key)
	g.Expect(err.Error()).To(gomega.And(gomega.ContainSubstring(`"agent" not found in namespace "agents"`),
		gomega.ContainSubstring("kubectl eds get -n agents")))

	err = Explain(apierrors.NewForbidden(gr, "agent", errors.New("no")), "ExtendedDaemonSet", key)
	g.Expect(err.Error()).To(gomega.And(gomega.HavePrefix("not allowed"), gomega.ContainSubstring("kubectl auth can-i --list -n agents")))
	g.Expect(apierrors.IsForbidden(errors.Unwrap(err))).To(gomega.BeTrue(), "the API error stays inspectable")

	err = Explain(&apimeta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "extendeddaemonset.io", Kind: "ExtendedDaemonSet"}}, "ExtendedDaemonSet", key)
	g.Expect(err.Error()).To(gomega.ContainSubstring("install the CRDs"))

	err = Explain(errors.New("connection refused"), "ExtendedDaemonSet", key)
	g.Expect(err.Error()).To(gomega.Equal("reading ExtendedDaemonSet agents/agent: connection refused"))
}
