// Command dist builds the release archives of kubectl-eds, their checksums
// and the filled krew manifest; `make dist` runs it:
//
//	go run ./test/dist -version v1.2.3 -date 2026-11-27T04:00:00Z -ldflags "$(VERSION_LDFLAGS)" -o dist
//
// For each platform (-platforms, os/arch, comma-separated) it cross-builds
// ./cmd/kubectl-eds with CGO_ENABLED=0, -trimpath and -ldflags "-s -w" plus
// the given ones, and packs kubectl-eds_<version>_<os>_<arch>.tar.gz holding
// kubectl-eds and LICENSE at its root. It then writes checksums.txt (as
// sha256sum prints them) and eds.yaml, the krew manifest of
// cmd/kubectl-eds/krew/eds.yaml with the version and each archive's SHA-256
// filled in. The template and the archives must name the same platforms.
//
// The archives are the same bytes for the same sources and Go toolchain:
// entries in a fixed order with fixed owners, modes and modification time
// (-date, the commit's), and no VCS stamp in the binary beyond what
// -ldflags sets.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// defaultPlatforms are those a release builds.
const defaultPlatforms = "linux/amd64,linux/arm64,darwin/amd64,darwin/arm64"

// config is what one run builds.
type config struct {
	version   string
	date      time.Time
	ldflags   string
	platforms []platform
	outDir    string
	template  string
	license   string
	pkg       string
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err == nil {
		err = run(cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	var cfg config
	var date, platforms string
	fs := flag.NewFlagSet("dist", flag.ContinueOnError)
	fs.StringVar(&cfg.version, "version", "", "the version the archives and the manifest are named for, e.g. v1.2.3 (required)")
	fs.StringVar(&date, "date", "", "the archive entries' modification time, RFC 3339 (the commit's date); empty means the Unix epoch")
	fs.StringVar(&cfg.ldflags, "ldflags", "", "linker flags added to -s -w, e.g. the -X flags of the version")
	fs.StringVar(&platforms, "platforms", defaultPlatforms, "os/arch pairs to build, comma-separated")
	fs.StringVar(&cfg.outDir, "o", "dist", "the directory to write into")
	fs.StringVar(&cfg.template, "template", "cmd/kubectl-eds/krew/eds.yaml", "the krew manifest template")
	fs.StringVar(&cfg.license, "license", "LICENSE", "the license packed beside the binary")
	fs.StringVar(&cfg.pkg, "package", "./cmd/kubectl-eds", "the plugin's main package")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if cfg.version == "" {
		return cfg, errors.New("-version is required")
	}
	if strings.ContainsAny(cfg.version, "/ \t\n") {
		return cfg, fmt.Errorf("-version %q cannot name a file: no slash or space", cfg.version)
	}
	cfg.date = time.Unix(0, 0).UTC()
	if date != "" {
		t, err := time.Parse(time.RFC3339, date)
		if err != nil {
			return cfg, fmt.Errorf("-date: %w", err)
		}
		cfg.date = t.UTC()
	}
	var err error
	if cfg.platforms, err = parsePlatforms(platforms); err != nil {
		return cfg, fmt.Errorf("-platforms: %w", err)
	}
	return cfg, nil
}

func run(cfg config) error {
	if err := os.MkdirAll(cfg.outDir, 0o755); err != nil {
		return err
	}
	license, err := os.ReadFile(cfg.license)
	if err != nil {
		return fmt.Errorf("reading the license: %w", err)
	}
	template, err := os.ReadFile(cfg.template)
	if err != nil {
		return fmt.Errorf("reading the krew manifest template: %w", err)
	}
	// The manifest is filled before the builds too, against the archives'
	// names alone, so that a template that does not match the platforms
	// fails in a second rather than after minutes of building.
	var named []archive
	for _, p := range cfg.platforms {
		named = append(named, archive{platform: p, name: archiveName(cfg.version, p)})
	}
	if _, err := fillManifest(template, cfg.version, named); err != nil {
		return fmt.Errorf("%s: %w", cfg.template, err)
	}

	buildDir, err := os.MkdirTemp("", "kubectl-eds-dist-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(buildDir)
	var archives []archive
	for _, p := range cfg.platforms {
		bin := filepath.Join(buildDir, p.os+"_"+p.arch, pluginBinary)
		if err := build(cfg, p, bin); err != nil {
			return err
		}
		a, err := pack(filepath.Join(cfg.outDir, archiveName(cfg.version, p)), bin, license, cfg.date)
		if err != nil {
			return err
		}
		a.platform = p
		archives = append(archives, a)
	}
	if err := writeChecksums(filepath.Join(cfg.outDir, checksumsFile), archives); err != nil {
		return err
	}
	manifest, err := fillManifest(template, cfg.version, archives)
	if err != nil {
		return fmt.Errorf("%s: %w", cfg.template, err)
	}
	if err := os.WriteFile(filepath.Join(cfg.outDir, manifestFile), manifest, 0o644); err != nil {
		return fmt.Errorf("writing the krew manifest: %w", err)
	}
	return nil
}
