package steer_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/onsi/gomega"
)

func TestHistoryListsTheRevisionsOldestFirst(t *testing.T) {
	t.Parallel()
	s := threeRevisions(t)
	names := replicaSetNames(s)

	r := run(s, "history", name)
	s.G.Expect(r.Code).To(gomega.BeZero(), r.Err)
	lines := strings.Split(strings.TrimSuffix(r.Out, "\n"), "\n")
	s.G.Expect(lines).To(gomega.HaveLen(4), r.Out)
	s.G.Expect(strings.Fields(lines[0])).To(gomega.Equal([]string{"REVISION", "NAME", "STATE", "IMAGES", "AGE"}))
	for i, want := range [][]string{
		{"1", names[0], "old", "agent=agent:v1"},
		{"2", names[1], "old", "agent=agent:v2"},
		{"3", names[2], "active", "agent=agent:v3"},
	} {
		fields := strings.Fields(lines[i+1])
		s.G.Expect(fields).To(gomega.HaveLen(5), lines[i+1])
		s.G.Expect(fields[:4]).To(gomega.Equal(want))
		s.G.Expect(fields[4]).To(gomega.MatchRegexp(`^\d+s$`), "age")
	}
}

func TestHistoryOfAnUnknownExtendedDaemonSet(t *testing.T) {
	t.Parallel()
	s := env.NewScenario(t)
	expectRefused(s, run(s, "history", "nope"),
		fmt.Sprintf(`ExtendedDaemonSet "nope" not found in namespace %q: `+"`kubectl eds get -n %s`", s.Namespace, s.Namespace))
}
