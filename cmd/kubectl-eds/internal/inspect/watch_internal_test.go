package inspect

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

func rollingSnapshot(upToDate int32) *snapshot {
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns", Generation: 2}}
	eds.Status = v1alpha1.ExtendedDaemonSetStatus{ObservedGeneration: 2, Desired: 4, UpToDate: upToDate, Available: 4,
		State: v1alpha1.StateRollingUpdate, Reason: v1alpha1.ReasonRollingUpdate}
	return &snapshot{eds: eds, now: time.Now()}
}

// On a terminal, each change redraws the screen, with progress bars;
// elsewhere, each change is one line. Nothing changed, nothing is written.
func TestShowWritesOnlyChanges(t *testing.T) {
	g := gomega.NewWithT(t)
	var out bytes.Buffer
	s := &statusRun{out: &out, terminal: true}
	shown, err := s.show(rollingSnapshot(1), "")
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(out.String()).To(gomega.HavePrefix(clearScreen + "Name:"))
	g.Expect(out.String()).To(gomega.ContainSubstring("  Up to date   [███████░░░░░░░░░░░░░░░░░░░░░░░] 1/4\n"))
	g.Expect(out.String()).To(gomega.ContainSubstring("  Available    [██████████████████████████████] 4/4\n"))
	out.Reset()
	_, err = s.show(rollingSnapshot(1), shown)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(out.String()).To(gomega.BeEmpty())

	s = &statusRun{out: &out}
	shown = ""
	for _, upToDate := range []int32{1, 1, 2, 2, 4} {
		shown, err = s.show(rollingSnapshot(upToDate), shown)
		g.Expect(err).NotTo(gomega.HaveOccurred())
	}
	g.Expect(strings.Split(out.String(), "\n")).To(gomega.HaveExactElements(
		"RollingUpdate (RollingUpdate): 1/4 up to date, 4/4 available",
		"RollingUpdate (RollingUpdate): 2/4 up to date, 4/4 available",
		"RollingUpdate (RollingUpdate): 4/4 up to date, 4/4 available",
		""))
}

func TestBarFillsInProportion(t *testing.T) {
	g := gomega.NewWithT(t)
	g.Expect(bar(0, 3)).To(gomega.Equal("[" + strings.Repeat("░", barWidth) + "]"))
	g.Expect(bar(3, 3)).To(gomega.Equal("[" + strings.Repeat("█", barWidth) + "]"))
	g.Expect(bar(6, 3)).To(gomega.Equal(bar(3, 3)), "an old pod counted on top of the new ones does not overflow the bar")
	g.Expect(bar(0, 0)).To(gomega.Equal(bar(3, 3)), "nothing to do is done")
}
