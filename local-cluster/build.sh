#!/usr/bin/env bash
# Builds etcd, kube-apiserver and kube-controller-manager from the official Go modules
# (through the Go module proxy) into a cache outside the repo, keyed by version and Go version.
# Idempotent: returns at once when the stamp of a finished build is present.
set -euo pipefail

K8S_VERSION="${HNC_K8S_VERSION:-v1.37.2}"
ETCD_VERSION="${HNC_ETCD_VERSION:-v3.7.3}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

die() { echo "control-plane build: $*" >&2; exit 1; }

if ! command -v go >/dev/null 2>&1; then
  die "Go is not installed. Install Go 1.24 or newer (https://go.dev/doc/install), or set KUBEBUILDER_ASSETS to a folder holding etcd and kube-apiserver."
fi
GOVER="$(go env GOVERSION)"
case "$GOVER" in go1.2[4-9]*|go1.[3-9]*) ;; *) die "Go $GOVER is too old: Go 1.24 or newer is needed (the 'tool' directive).";; esac

CACHE_ROOT="${HNC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hnc-ts}"
OUT="$CACHE_ROOT/k8s/${K8S_VERSION}-etcd-${ETCD_VERSION}-${GOVER}"
STAMP="$OUT/.complete"
BINARIES="etcd kube-apiserver kube-controller-manager kubectl"
complete() { [ -f "$STAMP" ] || return 1; for b in $BINARIES; do [ -x "$OUT/$b" ] || return 1; done; }
if complete; then
  [ "${1:-}" = "--print-dir" ] && echo "$OUT"
  exit 0
fi
# Two builds at once (npm start in one shell, npm test in another) must not write into one folder:
# take a lock, look again (the other may have finished), build into a scratch folder and rename
# it into place, so the cache holds either nothing or a complete build.
mkdir -p "$CACHE_ROOT/k8s"
exec 9>"$CACHE_ROOT/k8s/.build.lock"
if ! flock -n 9; then
  echo "control-plane build: another build is running; waiting for it ..." >&2
  flock 9
fi
if complete; then
  [ "${1:-}" = "--print-dir" ] && echo "$OUT"
  exit 0
fi
FINAL="$OUT"
PARTIAL="$(mktemp -d "$CACHE_ROOT/k8s/.partial.XXXXXX")"
chmod 755 "$PARTIAL"
OUT="$PARTIAL"
STAMP="$OUT/.complete"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
start=$(date +%s)

# --- kube-apiserver + kube-controller-manager -------------------------------------------------
# k8s.io/kubernetes requires its staging modules at v0.0.0 and maps them with replace lines that
# are ignored for a dependency, so a wrapper module pins each one to v0.<minor>.<patch>.
# The wrapper is generated in a scratch folder from the exact k/k go.mod, so a staging module
# added in a later release cannot be missed.
work="$(mktemp -d "${TMPDIR:-/tmp}/hnc-k8s-build.XXXXXX")"
trap 'rm -rf "$work" "$PARTIAL"' EXIT
STAGING="v0.${K8S_VERSION#v1.}"
echo "control-plane build: resolving k8s.io/kubernetes@$K8S_VERSION (staging $STAGING) ..." >&2
mkdir -p "$work/k8s" "$work/etcd"
GOMOD="$(cd "$work" && go list -m -f '{{.GoMod}}' "k8s.io/kubernetes@$K8S_VERSION")" \
  || die "the Go module proxy did not serve k8s.io/kubernetes@$K8S_VERSION (set HNC_K8S_VERSION=v1.36.3 HNC_ETCD_VERSION=v3.6.16 to fall back)"
(
  cd "$work/k8s"
  go mod init hnc-ts.invalid/k8sbin >/dev/null 2>&1
  go mod edit -go="$(awk '$1=="go"{print $2; exit}' "$GOMOD")"
  grep '^godebug' "$GOMOD" >> go.mod || true
  for m in $(awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" {print $1}' "$GOMOD" | sort -u); do
    go mod edit -replace="$m=$m@$STAGING"
  done
  go mod edit -require="k8s.io/kubernetes@$K8S_VERSION"
  go get -tool "k8s.io/kubernetes/cmd/kube-apiserver@$K8S_VERSION" "k8s.io/kubernetes/cmd/kube-controller-manager@$K8S_VERSION" "k8s.io/kubernetes/cmd/kubectl@$K8S_VERSION"
) || die "resolving the Kubernetes modules failed (see above)"

MIN="$(echo "$K8S_VERSION" | cut -d. -f2)"
D="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
X=""
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  X="$X -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$MIN -X $p.gitTreeState=clean -X $p.buildDate=$D"
done
# kubectl of the same version, so tests (and `kubectl hns` through plugin lookup) see no version skew.
echo "control-plane build: compiling kube-apiserver, kube-controller-manager and kubectl (a cold build takes 10-25 minutes on 2 cores) ..." >&2
(cd "$work/k8s" && go build -mod=mod -p "$(nproc)" -trimpath -tags=selinux,notest -ldflags="-s -w $X" -o "$OUT/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kubectl) \
  || die "compiling Kubernetes failed (see above)"

# --- etcd ------------------------------------------------------------------------------------
# A separate wrapper, so etcd's server does not bump the etcd client kube-apiserver was built with.
echo "control-plane build: compiling etcd $ETCD_VERSION ..." >&2
(
  cd "$work/etcd"
  go mod init hnc-ts.invalid/etcdbin >/dev/null 2>&1
  go get -tool "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
  go build -mod=mod -trimpath -ldflags="-s -w" -o "$OUT/etcd" go.etcd.io/etcd/server/v3
) || die "compiling etcd failed (see above)"

# Whole outputs, no `| head`: a closed pipe is a SIGPIPE, a failure under pipefail.
"$OUT/kube-apiserver" --version >&2
etcd_version="$("$OUT/etcd" --version)"
echo "${etcd_version%%$'\n'*}" >&2
printf 'k8s=%s\netcd=%s\ngo=%s\nseconds=%s\n' "$K8S_VERSION" "$ETCD_VERSION" "$GOVER" "$(( $(date +%s) - start ))" > "$STAMP"
rm -rf "$FINAL"
mv "$OUT" "$FINAL"
OUT="$FINAL"
echo "control-plane build: done in $(( $(date +%s) - start ))s into $OUT" >&2
[ "${1:-}" = "--print-dir" ] && echo "$OUT"
exit 0
