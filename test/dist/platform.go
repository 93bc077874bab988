package main

import (
	"fmt"
	"slices"
	"strings"
)

// platform is one GOOS/GOARCH pair, as krew's selector labels os and arch
// name it.
type platform struct{ os, arch string }

func (p platform) String() string { return p.os + "/" + p.arch }

// parsePlatforms reads a comma-separated list of os/arch pairs.
func parsePlatforms(list string) ([]platform, error) {
	var platforms []platform
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		goos, goarch, ok := strings.Cut(item, "/")
		if !ok || goos == "" || goarch == "" || strings.Contains(goarch, "/") {
			return nil, fmt.Errorf("%q is not os/arch, e.g. linux/amd64", item)
		}
		p := platform{os: goos, arch: goarch}
		if slices.Contains(platforms, p) {
			return nil, fmt.Errorf("%s is listed twice", p)
		}
		platforms = append(platforms, p)
	}
	if len(platforms) == 0 {
		return nil, fmt.Errorf("no platform in %q", list)
	}
	return platforms, nil
}
