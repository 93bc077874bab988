package main

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"
)

const (
	testVersion = "v0.0.0-disttest"
	testDate    = "2026-11-27T04:00:00Z"
	// versionVar is the variable VERSION_LDFLAGS sets to the version.
	versionVar = "github.com/extendeddaemonset/extendeddaemonset/cmd/internal/version.version"
	releaseURL = "https://github.com/extendeddaemonset/extendeddaemonset/releases/download/"
)

// krewPlugin is what this test reads of krew's Plugin (v1alpha2).
type krewPlugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		Homepage         string `json:"homepage"`
		ShortDescription string `json:"shortDescription"`
		Description      string `json:"description"`
		Caveats          string `json:"caveats"`
		Platforms        []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			SHA256 string `json:"sha256"`
			Files  []struct {
				From string `json:"from"`
				To   string `json:"to"`
			} `json:"files"`
			Bin string `json:"bin"`
		} `json:"platforms"`
	} `json:"spec"`
}

func parseManifest(t *testing.T, data []byte) krewPlugin {
	t.Helper()
	var plugin krewPlugin
	g := gomega.NewWithT(t)
	g.Expect(yaml.UnmarshalStrict(data, &plugin)).To(gomega.Succeed(), "the manifest has only fields of krew's Plugin")
	g.Expect(plugin.APIVersion).To(gomega.Equal("krew.googlecontainertools.github.com/v1alpha2"))
	g.Expect(plugin.Kind).To(gomega.Equal("Plugin"))
	g.Expect(plugin.Metadata.Name).To(gomega.Equal("eds"))
	return plugin
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	gomega.NewWithT(t).Expect(err).NotTo(gomega.HaveOccurred())
	return data
}

func sha256Of(t *testing.T, path string) string {
	t.Helper()
	sum := sha256.Sum256(readFile(t, path))
	return hex.EncodeToString(sum[:])
}

// hostTemplate writes the krew template with the host's platform alone, so
// that dist builds one binary, not the four of a release (minutes cold).
// TestTemplateMatchesTheReleasePlatforms checks the template whole.
func hostTemplate(t *testing.T, host platform) string {
	t.Helper()
	g := gomega.NewWithT(t)
	template := string(readFile(t, templatePath))
	root, err := kyaml.Parse(withoutHeader(template))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	platforms, err := root.Pipe(kyaml.Lookup("spec", "platforms"))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	elements, err := platforms.Elements()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	var kept []*kyaml.RNode
	for _, element := range elements {
		if p, err := selectorPlatform(element); err == nil && p == host {
			kept = append(kept, element)
		}
	}
	g.Expect(kept).To(gomega.HaveLen(1), "the template has a platform for the host, %s", host)
	platforms.YNode().Content = []*kyaml.Node{kept[0].YNode()}
	out, err := root.String()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	path := filepath.Join(t.TempDir(), "eds.yaml")
	g.Expect(os.WriteFile(path, []byte(out), 0o644)).To(gomega.Succeed())
	return path
}

// runDist runs dist for the host platform into a new directory, as make
// dist runs it for the release's four.
func runDist(t *testing.T, host platform, template string) string {
	t.Helper()
	out := t.TempDir()
	cfg, err := parseFlags([]string{"-version", testVersion, "-date", testDate, "-ldflags", "-X " + versionVar + "=" + testVersion,
		"-platforms", host.String(), "-o", out, "-template", template,
		"-license", "../../LICENSE", "-package", "../../cmd/kubectl-eds"})
	g := gomega.NewWithT(t)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(run(cfg)).To(gomega.Succeed())
	return out
}

// make dist's program, run for the host platform: the archive holds the
// plugin and the license, the plugin prints the version it was linked
// with, checksums.txt and the krew manifest name the archive's SHA-256,
// and a second run writes the same bytes.
func TestDistPacksTheHostPlatform(t *testing.T) {
	g := gomega.NewWithT(t)
	host := platform{os: runtime.GOOS, arch: runtime.GOARCH}
	template := hostTemplate(t, host)
	out := runDist(t, host, template)
	name := archiveName(testVersion, host)

	entries, err := os.ReadDir(out)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	g.Expect(files).To(gomega.ConsistOf(name, checksumsFile, manifestFile))

	// The archive: kubectl-eds, executable, and LICENSE, at its root.
	bin, license := filepath.Join(t.TempDir(), pluginBinary), filepath.Join(t.TempDir(), licenseFile)
	headers := extract(t, filepath.Join(out, name), map[string]string{pluginBinary: bin, licenseFile: license})
	g.Expect(headers).To(gomega.HaveLen(2))
	g.Expect(headers[0].Name).To(gomega.Equal(pluginBinary))
	g.Expect(headers[0].Mode).To(gomega.Equal(int64(0o755)), "the plugin is executable")
	g.Expect(headers[1].Name).To(gomega.Equal(licenseFile))
	g.Expect(headers[1].Mode).To(gomega.Equal(int64(0o644)))
	g.Expect(readFile(t, license)).To(gomega.Equal(readFile(t, "../../LICENSE")))
	for _, h := range headers {
		g.Expect(h.ModTime.UTC().Format(time.RFC3339)).To(gomega.Equal(testDate), "%s's modification time is -date", h.Name)
		g.Expect([]int{h.Uid, h.Gid}).To(gomega.Equal([]int{0, 0}), h.Name)
	}

	// The plugin says the version it was linked with.
	printed, err := exec.Command(bin, "version", "-o", "json").Output()
	g.Expect(err).NotTo(gomega.HaveOccurred(), "%s", errOutput(err))
	var info struct{ Version, Platform string }
	g.Expect(json.Unmarshal(printed, &info)).To(gomega.Succeed(), string(printed))
	g.Expect(info.Version).To(gomega.Equal(testVersion))
	g.Expect(info.Platform).To(gomega.Equal(host.String()))

	// checksums.txt, as sha256sum -c reads it.
	sums := readChecksums(t, filepath.Join(out, checksumsFile))
	g.Expect(sums).To(gomega.HaveLen(1))
	g.Expect(sums).To(gomega.HaveKeyWithValue(name, sha256Of(t, filepath.Join(out, name))),
		"checksums.txt names the archive with its SHA-256")

	// The krew manifest: the version, the archive's uri and SHA-256.
	manifest := parseManifest(t, readFile(t, filepath.Join(out, manifestFile)))
	g.Expect(manifest.Spec.Version).To(gomega.Equal(testVersion))
	g.Expect(manifest.Spec.Platforms).To(gomega.HaveLen(1))
	p := manifest.Spec.Platforms[0]
	g.Expect(p.Selector.MatchLabels).To(gomega.Equal(map[string]string{"os": host.os, "arch": host.arch}))
	g.Expect(p.URI).To(gomega.Equal(releaseURL + testVersion + "/" + name))
	g.Expect(p.SHA256).To(gomega.Equal(sha256Of(t, filepath.Join(out, name))), "the manifest's sha256 is the archive's")
	g.Expect(p.Bin).To(gomega.Equal(pluginBinary))
	var from []string
	for _, f := range p.Files {
		from = append(from, f.From)
	}
	g.Expect(from).To(gomega.ConsistOf(pluginBinary, licenseFile), "krew installs the plugin and its license")

	// The same sources give the same bytes.
	again := runDist(t, host, template)
	g.Expect(sha256Of(t, filepath.Join(again, name))).To(gomega.Equal(sha256Of(t, filepath.Join(out, name))), "a second build differs")
}

// extract reads the tar.gz at path, writes each entry named in to to its
// path there, and returns the headers in archive order. An entry not in
// to fails the test.
func extract(t *testing.T, path string, to map[string]string) []*tar.Header {
	t.Helper()
	g := gomega.NewWithT(t)
	f, err := os.Open(path)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	defer f.Close()
	zr, err := gzip.NewReader(f)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	tr := tar.NewReader(zr)
	var headers []*tar.Header
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return headers
		}
		g.Expect(err).NotTo(gomega.HaveOccurred())
		headers = append(headers, h)
		dest, ok := to[h.Name]
		g.Expect(ok).To(gomega.BeTrue(), "unexpected entry %s in %s", h.Name, path)
		g.Expect(h.Typeflag).To(gomega.Equal(byte(tar.TypeReg)), h.Name)
		data, err := io.ReadAll(tr)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		g.Expect(os.WriteFile(dest, data, os.FileMode(h.Mode))).To(gomega.Succeed())
	}
}

// readChecksums reads lines of sha256sum: the hex digest, two spaces, the
// file name.
func readChecksums(t *testing.T, path string) map[string]string {
	t.Helper()
	g := gomega.NewWithT(t)
	f, err := os.Open(path)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	defer f.Close()
	sums := map[string]string{}
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		sum, name, ok := strings.Cut(scanner.Text(), "  ")
		g.Expect(ok).To(gomega.BeTrue(), "line %q is not sha256sum's", scanner.Text())
		g.Expect(sum).To(gomega.MatchRegexp(`^[0-9a-f]{64}$`), name)
		sums[name] = sum
	}
	g.Expect(scanner.Err()).NotTo(gomega.HaveOccurred())
	return sums
}

func errOutput(err error) string {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(exit.Stderr)
	}
	return ""
}
