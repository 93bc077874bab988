// Package version tells which build of the manager or of kubectl-eds runs:
// its version, commit and build date, set at link time by the Makefile
//
//	go build -ldflags "-X github.com/extendeddaemonset/extendeddaemonset/cmd/internal/version.version=v1.2.3 \
//	  -X github.com/extendeddaemonset/extendeddaemonset/cmd/internal/version.commit=<sha> \
//	  -X github.com/extendeddaemonset/extendeddaemonset/cmd/internal/version.date=<RFC 3339>"
//
// (VERSION_LDFLAGS), and read from the module's build info for what was not
// set there: `go install ...@v1.2.3` stamps the module version, `go build`
// in a git checkout the revision, its time and whether the tree was
// modified.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set with -X at link time; empty when not.
var (
	version string
	commit  string
	date    string
)

// Unknown stands for what neither the linker nor the build info told.
const Unknown = "unknown"

// develVersion is the main module's version in the build info of a build
// that has none (go run, go build outside a checkout).
const develVersion = "(devel)"

// dirty marks a commit built from a modified working tree, as `git
// describe --dirty` marks the version.
const dirty = "-dirty"

// Info is what one build is.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get is this binary's Info.
func Get() Info {
	return resolve(version, commit, date, debug.ReadBuildInfo)
}

// resolve takes each of version, commit and date as the linker set it,
// else from the build info that readBuildInfo returns, else Unknown.
func resolve(version, commit, date string, readBuildInfo func() (*debug.BuildInfo, bool)) Info {
	info := Info{
		Version:   version,
		Commit:    commit,
		Date:      date,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
	if build, ok := readBuildInfo(); ok {
		fromBuildInfo(&info, build)
	}
	for _, field := range []*string{&info.Version, &info.Commit, &info.Date} {
		if *field == "" {
			*field = Unknown
		}
	}
	return info
}

// fromBuildInfo fills the fields of info the linker left empty.
func fromBuildInfo(info *Info, build *debug.BuildInfo) {
	if info.Version == "" && build.Main.Version != develVersion {
		info.Version = build.Main.Version
	}
	settings := map[string]string{}
	for _, s := range build.Settings {
		settings[s.Key] = s.Value
	}
	if info.Commit == "" && settings["vcs.revision"] != "" {
		info.Commit = settings["vcs.revision"]
		if settings["vcs.modified"] == "true" {
			info.Commit += dirty
		}
	}
	if info.Date == "" {
		info.Date = settings["vcs.time"]
	}
}

// String is info on one line, e.g.
// "v1.2.3 (commit 0123abc, built 2026-11-27T04:00:00Z, go1.27.0 linux/amd64)".
func (info Info) String() string {
	return fmt.Sprintf("%s (commit %s, built %s, %s %s)", info.Version, info.Commit, info.Date, info.GoVersion, info.Platform)
}
