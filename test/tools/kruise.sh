#!/usr/bin/env bash
# Builds OpenKruise's manager, the peer of `make bench` that runs the
# Advanced DaemonSet controller, from the Go module proxy into the tool
# cache, and copies its Advanced DaemonSet CRD next to it. Only the
# benchmark needs it, so testbin.sh leaves it out. The last line printed is
# the directory holding `manager` and `crds/`.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"

cache_root=${EDS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/extendeddaemonset}
dir="$cache_root/tools/kruise-manager-$KRUISE_VERSION"
stamp="$dir/.version"
mkdir -p "$dir"

export GOTOOLCHAIN=${GOTOOLCHAIN:-auto} CGO_ENABLED=0

# The module is built as published, from a writable copy of its directory
# (the module cache is read-only) with -mod=mod, since its vendor-less
# go.sum does not list every module the build needs. The stamp names the
# version and is written last, so an interrupted build is redone.
if [ "$(cat "$stamp" 2>/dev/null)" != "$KRUISE_VERSION" ] || [ ! -x "$dir/manager" ] || [ ! -f "$dir/crds/apps.kruise.io_daemonsets.yaml" ]; then
	echo "building kruise manager $KRUISE_VERSION" >&2
	module=$(GOFLAGS= go mod download -json "github.com/openkruise/kruise@$KRUISE_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	if [ ! -f "$module/config/crd/bases/apps.kruise.io_daemonsets.yaml" ]; then
		echo "cannot find the Advanced DaemonSet CRD in the module of kruise $KRUISE_VERSION (got \"$module\")" >&2
		exit 1
	fi
	rm -f "$stamp"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	cp -R "$module" "$tmp/src"
	chmod -R u+w "$tmp/src"
	(cd "$tmp/src" && GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$dir/.manager.tmp" .)
	rm -rf "$dir/crds"
	mkdir -p "$dir/crds"
	cp "$tmp/src/config/crd/bases/apps.kruise.io_daemonsets.yaml" "$dir/crds/"
	mv "$dir/.manager.tmp" "$dir/manager"
	echo "$KRUISE_VERSION" >"$stamp"
fi

echo "$dir"
