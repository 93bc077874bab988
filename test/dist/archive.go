package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Names of what dist writes beside the archives.
const (
	checksumsFile = "checksums.txt"
	manifestFile  = "eds.yaml"
	licenseFile   = "LICENSE"
)

// archive is one packed platform.
type archive struct {
	platform platform
	name     string // file name, in the output directory
	sha256   string // hex
}

func archiveName(version string, p platform) string {
	return fmt.Sprintf("kubectl-eds_%s_%s_%s.tar.gz", version, p.os, p.arch)
}

// pack writes path, a tar.gz of the binary bin and the license at its
// root. Owners, modes and the modification time are fixed and the gzip
// header carries no name or time, so the bytes depend on the contents
// alone.
func pack(path, bin string, license []byte, mtime time.Time) (archive, error) {
	binary, err := os.ReadFile(bin)
	if err != nil {
		return archive{}, fmt.Errorf("reading the built plugin: %w", err)
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return archive{}, err
	}
	tw := tar.NewWriter(zw)
	for _, entry := range []struct {
		name string
		mode int64
		data []byte
	}{
		{pluginBinary, 0o755, binary},
		{licenseFile, 0o644, license},
	} {
		header := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     entry.name,
			Mode:     entry.mode,
			Size:     int64(len(entry.data)),
			ModTime:  mtime.Truncate(time.Second),
			Uname:    "root",
			Gname:    "root",
			Format:   tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(header); err != nil {
			return archive{}, fmt.Errorf("packing %s: %w", entry.name, err)
		}
		if _, err := tw.Write(entry.data); err != nil {
			return archive{}, fmt.Errorf("packing %s: %w", entry.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return archive{}, fmt.Errorf("packing %s: %w", path, err)
	}
	if err := zw.Close(); err != nil {
		return archive{}, fmt.Errorf("compressing %s: %w", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return archive{}, fmt.Errorf("writing the archive: %w", err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return archive{name: filepath.Base(path), sha256: hex.EncodeToString(sum[:])}, nil
}

// writeChecksums writes the archives' SHA-256 as `sha256sum` prints them,
// sorted by name, so that `sha256sum -c checksums.txt` checks a download.
func writeChecksums(path string, archives []archive) error {
	sorted := slices.SortedFunc(slices.Values(archives), func(a, b archive) int { return strings.Compare(a.name, b.name) })
	var b strings.Builder
	for _, a := range sorted {
		fmt.Fprintf(&b, "%s  %s\n", a.sha256, a.name)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing the checksums: %w", err)
	}
	return nil
}
