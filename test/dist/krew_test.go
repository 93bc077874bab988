package main

import (
	"strings"
	"testing"

	"github.com/onsi/gomega"
)

const templatePath = "../../cmd/kubectl-eds/krew/eds.yaml"

// namedArchives are the archives of version for platforms, each with sum.
func namedArchives(version, sum string, platforms ...platform) []archive {
	var archives []archive
	for _, p := range platforms {
		archives = append(archives, archive{platform: p, name: archiveName(version, p), sha256: sum})
	}
	return archives
}

func releasePlatforms(t *testing.T) []platform {
	t.Helper()
	platforms, err := parsePlatforms(defaultPlatforms)
	gomega.NewWithT(t).Expect(err).NotTo(gomega.HaveOccurred())
	return platforms
}

// The template names exactly the platforms a release builds, and fills
// without a placeholder left. An all-digit SHA-256 stays a string.
func TestTemplateMatchesTheReleasePlatforms(t *testing.T) {
	g := gomega.NewWithT(t)
	template := readFile(t, templatePath)
	sum := strings.Repeat("0123456789", 6) + "0123"
	out, err := fillManifest(template, "v1.2.3", namedArchives("v1.2.3", sum, releasePlatforms(t)...))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	manifest := parseManifest(t, out)
	g.Expect(manifest.Spec.Version).To(gomega.Equal("v1.2.3"))
	g.Expect(manifest.Spec.Platforms).To(gomega.HaveLen(len(releasePlatforms(t))))
	for _, p := range manifest.Spec.Platforms {
		g.Expect(p.SHA256).To(gomega.Equal(sum))
	}
	g.Expect(string(out)).To(gomega.HavePrefix("# Krew plugin manifest of `kubectl eds` v1.2.3, written by make dist"))
	g.Expect(string(out)).NotTo(gomega.ContainSubstring("a template"), "the template's header is left out")
}

func TestFillRefusesPlatformsAndArchivesThatDoNotPair(t *testing.T) {
	g := gomega.NewWithT(t)
	template := readFile(t, templatePath)
	release := releasePlatforms(t)
	sum := strings.Repeat("ab", 32)

	_, err := fillManifest(template, "v1.2.3", namedArchives("v1.2.3", sum, release[1:]...))
	g.Expect(err).To(gomega.MatchError("spec.platforms[0]: linux/amd64 has no archive: build it, or take it out of the template"))

	windows := platform{os: "windows", arch: "amd64"}
	_, err = fillManifest(template, "v1.2.3", namedArchives("v1.2.3", sum, append(release, windows)...))
	g.Expect(err).To(gomega.MatchError("the archive kubectl-eds_v1.2.3_windows_amd64.tar.gz has no platform in the template: " +
		"add one, or do not build windows/amd64"))

	archives := namedArchives("v1.2.3", sum, release...)
	archives[0].name = "kubectl-eds-linux-amd64.tgz"
	_, err = fillManifest(template, "v1.2.3", archives)
	g.Expect(err).To(gomega.MatchError(gomega.ContainSubstring(`linux/amd64's uri "https://github.com/extendeddaemonset/extendeddaemonset/releases/download/v1.2.3/kubectl-eds_v1.2.3_linux_amd64.tar.gz" does not end with its archive's name kubectl-eds-linux-amd64.tgz`)))

	twice := strings.Replace(string(template), "os: linux\n        arch: arm64", "os: linux\n        arch: amd64", 1)
	_, err = fillManifest([]byte(twice), "v1.2.3", namedArchives("v1.2.3", sum, release...))
	g.Expect(err).To(gomega.MatchError("spec.platforms[1]: linux/amd64 is there twice"))

	placeholder := strings.Replace(string(template), "shortDescription:", "license: ${LICENSE}\n  shortDescription:", 1)
	_, err = fillManifest([]byte(placeholder), "v1.2.3", namedArchives("v1.2.3", sum, release...))
	g.Expect(err).To(gomega.MatchError("a placeholder is left unfilled: ${LICENSE}"))
}

func TestParsePlatforms(t *testing.T) {
	g := gomega.NewWithT(t)
	platforms, err := parsePlatforms(" linux/amd64, darwin/arm64 ")
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(platforms).To(gomega.Equal([]platform{{"linux", "amd64"}, {"darwin", "arm64"}}))
	for list, message := range map[string]string{
		"linux":                   `"linux" is not os/arch, e.g. linux/amd64`,
		"linux/amd64/v2":          `"linux/amd64/v2" is not os/arch, e.g. linux/amd64`,
		"linux/amd64,linux/amd64": "linux/amd64 is listed twice",
		",,":                      `no platform in ",,"`,
	} {
		_, err := parsePlatforms(list)
		g.Expect(err).To(gomega.MatchError(message), list)
	}
}
