#!/usr/bin/env bash
# Builds the control-plane binaries and the Prometheus server of the test
# harness from the Go module proxy into a per-version cache outside the
# repository, skipping what is already there. The last line printed is the
# directory to use as KUBEBUILDER_ASSETS.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"

cache_root=${EDS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/extendeddaemonset}
dir="$cache_root/testbin/k8s-$KUBERNETES_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION"
mkdir -p "$dir"

export GOTOOLCHAIN=${GOTOOLCHAIN:-auto} CGO_ENABLED=0 GOFLAGS=-mod=mod
minor=${KUBERNETES_VERSION#v1.}; minor=${minor%%.*}
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"

# build NAME PACKAGE... builds into a temporary name and renames, so an
# interrupted build never leaves a half-written binary that looks complete.
build() {
	local name=$1; shift
	[ -x "$dir/$name" ] && return 0
	echo "building $name" >&2
	(cd "$here" && go build -trimpath -ldflags "$ldflags" -o "$dir/.$name.tmp" "$@")
	mv "$dir/.$name.tmp" "$dir/$name"
}

build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
build kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler
build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager
build etcd ./etcd

if [ ! -x "$dir/kwok" ]; then
	echo "building kwok" >&2
	tmp=$(mktemp -d)
	GOBIN="$tmp" GOFLAGS= go install "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
	mv "$tmp/kwok" "$dir/kwok"
	rmdir "$tmp"
fi

# Prometheus and promtool come from their own wrapper module. The stamp names
# the version they were built from, so a bump in versions.env rebuilds them
# without touching the slow Kubernetes binaries next to them. No
# builtinassets tag: the module lacks the generated web UI, and the tests only
# need the HTTP API.
prom_stamp="$dir/.prometheus.version"
if [ "$(cat "$prom_stamp" 2>/dev/null)" != "$PROMETHEUS_VERSION" ] || [ ! -x "$dir/prometheus" ] || [ ! -x "$dir/promtool" ]; then
	required=$(cd "$here/prometheus" && go list -m -f '{{.Version}}' github.com/prometheus/prometheus)
	if [ "$required" != "$PROMETHEUS_VERSION" ]; then
		echo "test/tools/prometheus/go.mod requires github.com/prometheus/prometheus $required, versions.env pins $PROMETHEUS_VERSION" >&2
		exit 1
	fi
	# Module v0.MMm.p is Prometheus M.m.p (v0.307.3 is 3.7.3).
	release=${PROMETHEUS_VERSION#v0.}; series=${release%%.*}
	release="$((series / 100)).$((series % 100)).${release#*.}"
	rm -f "$prom_stamp"
	for name in prometheus promtool; do
		echo "building $name" >&2
		(cd "$here/prometheus" && go build -trimpath \
			-ldflags "-s -w -X github.com/prometheus/common/version.Version=$release" \
			-o "$dir/.$name.tmp" "github.com/prometheus/prometheus/cmd/$name")
		mv "$dir/.$name.tmp" "$dir/$name"
	done
	echo "$PROMETHEUS_VERSION" >"$prom_stamp"
fi

echo "$dir"
