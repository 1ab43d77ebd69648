#!/usr/bin/env bash
# Builds the local node's binaries from the official Go modules (through the Go module proxy):
# kubelet, kube-proxy and kube-scheduler (same wrapper-module method as ../build.sh, same
# Kubernetes version) and kube-router (NetworkPolicy enforcement only). They go to a cache of
# their own, keyed by versions, next to the control plane's, so adding the node never rebuilds
# the control plane. Idempotent: returns at once when the stamp of a finished build is present.
set -euo pipefail

K8S_VERSION="${HNC_K8S_VERSION:-v1.37.2}"
KUBE_ROUTER_VERSION="${HNC_KUBE_ROUTER_VERSION:-v2.1.0}"

die() { echo "node build: $*" >&2; exit 1; }

command -v go >/dev/null 2>&1 || die "Go is not installed. Install Go 1.24 or newer (https://go.dev/doc/install)."
GOVER="$(go env GOVERSION)"
case "$GOVER" in go1.2[4-9]*|go1.[3-9]*) ;; *) die "Go $GOVER is too old: Go 1.24 or newer is needed (the 'tool' directive).";; esac

CACHE_ROOT="${HNC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hnc-ts}"
OUT="$CACHE_ROOT/node/${K8S_VERSION}-kube-router-${KUBE_ROUTER_VERSION}-${GOVER}"
BINARIES="kubelet kube-proxy kube-scheduler kube-router"
complete() { [ -f "$OUT/.complete" ] || return 1; for b in $BINARIES; do [ -x "$OUT/$b" ] || return 1; done; }
done_() { [ "${1:-}" = "--print-dir" ] && echo "$OUT"; exit 0; }
complete && done_ "${1:-}"
# One build at a time (a lock, then look again), into a scratch folder renamed into place: the
# cache holds either nothing or a complete build.
mkdir -p "$CACHE_ROOT/node"
exec 9>"$CACHE_ROOT/node/.build.lock"
if ! flock -n 9; then
  echo "node build: another build is running; waiting for it ..." >&2
  flock 9
fi
complete && done_ "${1:-}"
FINAL="$OUT"
PARTIAL="$(mktemp -d "$CACHE_ROOT/node/.partial.XXXXXX")"
chmod 755 "$PARTIAL"
work="$(mktemp -d "${TMPDIR:-/tmp}/hnc-node-build.XXXXXX")"
trap 'rm -rf "$work" "$PARTIAL"' EXIT
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
start=$(date +%s)

# --- kubelet, kube-proxy, kube-scheduler ----------------------------------------------------------
# k8s.io/kubernetes requires its staging modules at v0.0.0 (mapped by replace lines a dependency's
# go.mod cannot pass on), so a wrapper module pins each to v0.<minor>.<patch>, derived from the
# exact k/k go.mod (docs/control-plane.md).
STAGING="v0.${K8S_VERSION#v1.}"
echo "node build: resolving k8s.io/kubernetes@$K8S_VERSION (staging $STAGING) ..." >&2
mkdir -p "$work/k8s" "$work/router"
GOMOD="$(cd "$work" && go list -m -f '{{.GoMod}}' "k8s.io/kubernetes@$K8S_VERSION")" \
  || die "the Go module proxy did not serve k8s.io/kubernetes@$K8S_VERSION"
CMDS="kubelet kube-proxy kube-scheduler"
(
  cd "$work/k8s"
  go mod init hnc-ts.invalid/nodebin >/dev/null 2>&1
  go mod edit -go="$(awk '$1=="go"{print $2; exit}' "$GOMOD")"
  grep '^godebug' "$GOMOD" >> go.mod || true
  for m in $(awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" {print $1}' "$GOMOD" | sort -u); do
    go mod edit -replace="$m=$m@$STAGING"
  done
  go mod edit -require="k8s.io/kubernetes@$K8S_VERSION"
  # shellcheck disable=SC2046
  go get -tool $(for c in $CMDS; do echo "k8s.io/kubernetes/cmd/$c@$K8S_VERSION"; done)
) || die "resolving the Kubernetes modules failed (see above)"
MIN="$(echo "$K8S_VERSION" | cut -d. -f2)"
D="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
X=""
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  X="$X -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$MIN -X $p.gitTreeState=clean -X $p.buildDate=$D"
done
echo "node build: compiling $CMDS (about 5 minutes on 2 cores after the control-plane build) ..." >&2
# shellcheck disable=SC2046
(cd "$work/k8s" && go build -mod=mod -p "$(nproc)" -trimpath -tags=selinux,notest -ldflags="-s -w $X" -o "$PARTIAL/" \
  $(for c in $CMDS; do echo "k8s.io/kubernetes/cmd/$c"; done)) || die "compiling the node's Kubernetes binaries failed (see above)"

# --- kube-router (NetworkPolicy only) ----------------------------------------------------------------
echo "node build: compiling kube-router $KUBE_ROUTER_VERSION ..." >&2
(cd "$work/router" && GOBIN="$PARTIAL" go install -trimpath -ldflags="-s -w" \
  "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@$KUBE_ROUTER_VERSION") || die "compiling kube-router failed (see above)"

"$PARTIAL/kubelet" --version >&2
"$PARTIAL/kube-router" --version >&2 || true
printf 'k8s=%s\nkube-router=%s\ngo=%s\nseconds=%s\n' "$K8S_VERSION" "$KUBE_ROUTER_VERSION" "$GOVER" "$(( $(date +%s) - start ))" > "$PARTIAL/.complete"
rm -rf "$FINAL"
mv "$PARTIAL" "$FINAL"
echo "node build: done in $(( $(date +%s) - start ))s into $OUT" >&2
done_ "${1:-}"
