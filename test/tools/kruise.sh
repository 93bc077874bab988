#!/usr/bin/env bash
# Builds OpenKruise's manager, the peer of `make bench` that runs the
# Advanced DaemonSet controller, from the Go module proxy into the tool
# cache, and copies the CRDs the benchmark installs next to it. Only the
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

# The CRDs the benchmark installs: the Advanced DaemonSet's; ImagePullJob's,
# without which the manager does not start (it indexes ImagePullJobs
# whatever its feature gates say); and those of the controllers that
# feature gates turn off, which the manager would otherwise look for in
# vain for 16 seconds each before it starts the others.
crds="apps.kruise.io_daemonsets.yaml apps.kruise.io_imagepulljobs.yaml
apps.kruise.io_imagelistpulljobs.yaml apps.kruise.io_containerrecreaterequests.yaml
apps.kruise.io_nodeimages.yaml apps.kruise.io_nodepodprobes.yaml apps.kruise.io_podprobemarkers.yaml
apps.kruise.io_resourcedistributions.yaml apps.kruise.io_workloadspreads.yaml
policy.kruise.io_podunavailablebudgets.yaml"

module=$(GOFLAGS='' go mod download -json "github.com/openkruise/kruise@$KRUISE_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
for crd in $crds; do
	if [ ! -f "$module/config/crd/bases/$crd" ]; then
		echo "cannot find $crd in the module of kruise $KRUISE_VERSION (got \"$module\")" >&2
		exit 1
	fi
done

# The module is built as published, from a writable copy of its directory
# (the module cache is read-only), with -mod=mod since its go.sum lacks
# some of the sums the build needs. The stamp names the version and is
# written last, so an interrupted build is redone.
if [ "$(cat "$stamp" 2>/dev/null)" != "$KRUISE_VERSION" ] || [ ! -x "$dir/manager" ]; then
	echo "building kruise manager $KRUISE_VERSION" >&2
	rm -f "$stamp"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	cp -R "$module" "$tmp/src"
	chmod -R u+w "$tmp/src"
	(cd "$tmp/src" && GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$dir/.manager.tmp" .)
	mv "$dir/.manager.tmp" "$dir/manager"
	echo "$KRUISE_VERSION" >"$stamp"
fi

# The CRDs are copied each time, from the module of the same version.
rm -rf "$dir/crds"
mkdir -p "$dir/crds"
for crd in $crds; do
	cp "$module/config/crd/bases/$crd" "$dir/crds/"
done
chmod -R u+w "$dir/crds"

echo "$dir"
