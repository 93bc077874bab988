package version

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/onsi/gomega"
)

func buildInfo(mainVersion string, settings ...string) func() (*debug.BuildInfo, bool) {
	info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/extendeddaemonset/extendeddaemonset", Version: mainVersion}}
	for i := 0; i+1 < len(settings); i += 2 {
		info.Settings = append(info.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
	}
	return func() (*debug.BuildInfo, bool) { return info, true }
}

// What the linker set wins over the build info.
func TestLinkTimeValues(t *testing.T) {
	g := gomega.NewWithT(t)
	saved := []string{version, commit, date}
	t.Cleanup(func() { version, commit, date = saved[0], saved[1], saved[2] })
	version, commit, date = "v1.2.3", "0123abc", "2026-11-27T04:00:00Z"

	info := Get()
	g.Expect(info).To(gomega.Equal(Info{
		Version: "v1.2.3", Commit: "0123abc", Date: "2026-11-27T04:00:00Z",
		GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}))
	g.Expect(info.String()).To(gomega.Equal("v1.2.3 (commit 0123abc, built 2026-11-27T04:00:00Z, " +
		runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")"))

	info = resolve("v1.2.3", "0123abc", "2026-11-27T04:00:00Z",
		buildInfo("v9.9.9", "vcs.revision", "fedcba9", "vcs.time", "2020-01-01T00:00:00Z", "vcs.modified", "true"))
	g.Expect([]string{info.Version, info.Commit, info.Date}).To(gomega.Equal([]string{"v1.2.3", "0123abc", "2026-11-27T04:00:00Z"}))
}

// Without link-time values, the module's version and the VCS settings the
// go command stamped tell the build; a modified tree marks the commit.
func TestBuildInfoFallback(t *testing.T) {
	g := gomega.NewWithT(t)
	info := resolve("", "", "",
		buildInfo("v1.2.4", "vcs.revision", "fedcba9", "vcs.time", "2026-11-26T10:00:00Z", "vcs.modified", "true"))
	g.Expect([]string{info.Version, info.Commit, info.Date}).To(gomega.Equal([]string{"v1.2.4", "fedcba9-dirty", "2026-11-26T10:00:00Z"}))

	info = resolve("", "", "", buildInfo("v1.2.4", "vcs.revision", "fedcba9", "vcs.modified", "false"))
	g.Expect(info.Commit).To(gomega.Equal("fedcba9"))

	// A version set alone keeps the commit and date of the build info.
	info = resolve("v1.2.5", "", "", buildInfo("(devel)", "vcs.revision", "fedcba9", "vcs.time", "2026-11-26T10:00:00Z"))
	g.Expect([]string{info.Version, info.Commit, info.Date}).To(gomega.Equal([]string{"v1.2.5", "fedcba9", "2026-11-26T10:00:00Z"}))
}

// go run and a build outside a checkout know nothing: each field says so.
func TestNothingKnown(t *testing.T) {
	g := gomega.NewWithT(t)
	info := resolve("", "", "", buildInfo("(devel)"))
	g.Expect([]string{info.Version, info.Commit, info.Date}).To(gomega.Equal([]string{Unknown, Unknown, Unknown}))

	info = resolve("", "", "", func() (*debug.BuildInfo, bool) { return nil, false })
	g.Expect([]string{info.Version, info.Commit, info.Date}).To(gomega.Equal([]string{Unknown, Unknown, Unknown}))
	g.Expect(info.String()).To(gomega.HavePrefix("unknown (commit unknown, built unknown, go"))
}
