#!/usr/bin/env bash
# Builds the control-plane binaries, the Prometheus server, helm and Flux's
# notification-controller of the test harness from the Go module proxy into a
# per-version cache outside the repository, skipping what is already there.
# The last line printed is the directory to use as KUBEBUILDER_ASSETS.
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

# helm, for the chart's tests, with the link-time values its own Makefile
# sets: its version, and the Kubernetes version of its client-go, which
# `helm template` and `helm lint` check a chart's kubeVersion against
# (without them helm assumes Kubernetes 1.20). The stamp names the version.
helm_stamp="$dir/.helm.version"
if [ "$(cat "$helm_stamp" 2>/dev/null)" != "$HELM_VERSION" ] || [ ! -x "$dir/helm" ]; then
	echo "building helm" >&2
	helm_gomod=$(GOFLAGS= go mod download -json "helm.sh/helm/v3@$HELM_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
	k8s_minor=$(sed -n 's/^[[:space:]]*k8s.io\/client-go v0\.\([0-9]*\)\..*/\1/p' "$helm_gomod")
	if [ -z "$k8s_minor" ]; then
		echo "cannot read the client-go version of helm $HELM_VERSION from $helm_gomod" >&2
		exit 1
	fi
	rm -f "$helm_stamp"
	tmp=$(mktemp -d)
	GOBIN="$tmp" GOFLAGS= go install -trimpath -ldflags "-s -w \
		-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION \
		-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$k8s_minor \
		-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$k8s_minor" \
		"helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
	mv "$tmp/helm" "$dir/helm"
	rmdir "$tmp"
	echo "$HELM_VERSION" >"$helm_stamp"
fi

# Flux's notification-controller, and its CRDs next to it (the notification
# tests install them), from its module as published: its go.mod replaces the
# api submodule with ./api, which the module zip lacks, so the copy drops
# the replace and the api comes from the proxy at the version it requires.
# The stamp names the version.
nc_stamp="$dir/.notification-controller.version"
if [ "$(cat "$nc_stamp" 2>/dev/null)" != "$NOTIFICATION_CONTROLLER_VERSION" ] || [ ! -x "$dir/notification-controller" ]; then
	echo "building notification-controller" >&2
	nc_module=$(GOFLAGS= go mod download -json "github.com/fluxcd/notification-controller@$NOTIFICATION_CONTROLLER_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	if [ ! -d "$nc_module/config/crd/bases" ]; then
		echo "cannot find the module of notification-controller $NOTIFICATION_CONTROLLER_VERSION (got \"$nc_module\")" >&2
		exit 1
	fi
	rm -f "$nc_stamp"
	tmp=$(mktemp -d)
	cp -R "$nc_module" "$tmp/src"
	chmod -R u+w "$tmp/src"
	(cd "$tmp/src" && go mod edit -dropreplace github.com/fluxcd/notification-controller/api &&
		go build -trimpath -ldflags "-s -w" -o "$dir/.notification-controller.tmp" .)
	rm -rf "$dir/notification-controller-crds"
	cp -R "$tmp/src/config/crd/bases" "$dir/notification-controller-crds"
	mv "$dir/.notification-controller.tmp" "$dir/notification-controller"
	rm -rf "$tmp"
	echo "$NOTIFICATION_CONTROLLER_VERSION" >"$nc_stamp"
fi

echo "$dir"
