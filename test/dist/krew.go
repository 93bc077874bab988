package main

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// versionPlaceholder is what the template says where the version goes.
const versionPlaceholder = "${VERSION}"

// fillManifest is the krew manifest of template for version: the version
// in place of ${VERSION}, and each platform's sha256 set to its archive's.
// Every platform of the template must have an archive, whose name its uri
// ends with, and every archive a platform: a release that builds one and
// not the other would publish a manifest krew fails on, or a build no one
// can install.
func fillManifest(template []byte, version string, archives []archive) ([]byte, error) {
	root, err := yaml.Parse(strings.ReplaceAll(withoutHeader(string(template)), versionPlaceholder, version))
	if err != nil {
		return nil, fmt.Errorf("parsing the template: %w", err)
	}
	platforms, err := root.Pipe(yaml.Lookup("spec", "platforms"))
	if err != nil || platforms == nil {
		return nil, errors.New("the template has no spec.platforms")
	}
	elements, err := platforms.Elements()
	if err != nil {
		return nil, fmt.Errorf("reading spec.platforms: %w", err)
	}
	unused := map[platform]archive{}
	for _, a := range archives {
		unused[a.platform] = a
	}
	seen := map[platform]bool{}
	for i, element := range elements {
		p, err := selectorPlatform(element)
		if err != nil {
			return nil, fmt.Errorf("spec.platforms[%d]: %w", i, err)
		}
		if seen[p] {
			return nil, fmt.Errorf("spec.platforms[%d]: %s is there twice", i, p)
		}
		seen[p] = true
		a, ok := unused[p]
		if !ok {
			return nil, fmt.Errorf("spec.platforms[%d]: %s has no archive: build it, or take it out of the template", i, p)
		}
		delete(unused, p)
		uri := element.Field("uri")
		if uri == nil {
			return nil, fmt.Errorf("spec.platforms[%d]: %s has no uri", i, p)
		}
		if uri := yaml.GetValue(uri.Value); path.Base(uri) != a.name {
			return nil, fmt.Errorf("spec.platforms[%d]: %s's uri %q does not end with its archive's name %s", i, p, uri, a.name)
		}
		if err := element.PipeE(yaml.SetField("sha256", yaml.NewStringRNode(a.sha256))); err != nil {
			return nil, fmt.Errorf("spec.platforms[%d]: setting sha256: %w", i, err)
		}
	}
	for _, a := range archives {
		if _, ok := unused[a.platform]; ok {
			return nil, fmt.Errorf("the archive %s has no platform in the template: add one, or do not build %s", a.name, a.platform)
		}
	}

	out, err := root.String()
	if err != nil {
		return nil, fmt.Errorf("encoding the manifest: %w", err)
	}
	if i := strings.Index(out, "${"); i >= 0 {
		line := out[i:]
		line, _, _ = strings.Cut(line, "\n")
		return nil, fmt.Errorf("a placeholder is left unfilled: %s", line)
	}
	header := fmt.Sprintf("# Krew plugin manifest of `kubectl eds` %s, written by make dist from\n"+
		"# cmd/kubectl-eds/krew/eds.yaml with the SHA-256 of each archive.\n", version)
	return []byte(header + out), nil
}

// selectorPlatform is the os and arch that a platform's selector matches.
func selectorPlatform(element *yaml.RNode) (platform, error) {
	label := func(name string) string {
		node, err := element.Pipe(yaml.Lookup("selector", "matchLabels", name))
		if err != nil || node == nil {
			return ""
		}
		return yaml.GetValue(node)
	}
	p := platform{os: label("os"), arch: label("arch")}
	if p.os == "" || p.arch == "" {
		return p, errors.New("selector.matchLabels must name both os and arch")
	}
	return p, nil
}

// withoutHeader is template without the comment lines it starts with:
// they say how to fill it, and the filled manifest says where it came from
// instead.
func withoutHeader(template string) string {
	rest := template
	for strings.HasPrefix(rest, "#") {
		_, rest, _ = strings.Cut(rest, "\n")
	}
	return rest
}
