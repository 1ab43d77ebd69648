#!/usr/bin/env bash
# Builds HNC's Go manager (sigs.k8s.io/hierarchical-namespaces/cmd/manager) from the Go module proxy
# into the cache beside the control plane's binaries, for the benchmark's opt-in comparison
# (`npm run bench -- --controller hnc-go`; docs/benchmarks.md). Nothing of HNC's is kept in the
# repository: a wrapper module in a scratch folder requires it, and its dependencies come from the
# proxy as its own go.mod pins them. Idempotent: returns at once when a finished build is present.
# Never run by `npm test` or .ci/run.
set -euo pipefail

HNC_GO_VERSION="${HNC_GO_VERSION:-v1.1.0}"
die() { echo "hnc-go build: $*" >&2; exit 1; }
command -v go >/dev/null 2>&1 || die "Go is not installed (https://go.dev/doc/install)."
GOVER="$(go env GOVERSION)"
CACHE_ROOT="${HNC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hnc-ts}"
OUT="$CACHE_ROOT/hnc-go/${HNC_GO_VERSION}-${GOVER}"
if [ -f "$OUT/.complete" ] && [ -x "$OUT/manager" ]; then
  echo "$OUT/manager"
  exit 0
fi
mkdir -p "$CACHE_ROOT/hnc-go"
exec 9>"$CACHE_ROOT/hnc-go/.build.lock"
flock 9
if [ -f "$OUT/.complete" ] && [ -x "$OUT/manager" ]; then
  echo "$OUT/manager"
  exit 0
fi
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
work="$(mktemp -d "${TMPDIR:-/tmp}/hnc-go-build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
echo "hnc-go build: resolving sigs.k8s.io/hierarchical-namespaces@$HNC_GO_VERSION (a cold build takes about 10 minutes on 2 cores) ..." >&2
(
  cd "$work"
  go mod init hnc-ts.invalid/hncgo >/dev/null 2>&1
  # HNC's own go line, so its dependencies resolve exactly as it pins them.
  go mod edit -go=1.20 -require="sigs.k8s.io/hierarchical-namespaces@$HNC_GO_VERSION"
  go get "sigs.k8s.io/hierarchical-namespaces/cmd/manager@$HNC_GO_VERSION"
  go build -mod=mod -trimpath -ldflags="-s -w" -o "$work/manager" sigs.k8s.io/hierarchical-namespaces/cmd/manager
) >&2 || die "building sigs.k8s.io/hierarchical-namespaces@$HNC_GO_VERSION failed (see above)"
rm -rf "$OUT"
mkdir -p "$OUT"
mv "$work/manager" "$OUT/manager"
printf 'hnc=%s\ngo=%s\nseconds=%s\n' "$HNC_GO_VERSION" "$GOVER" "$(($(date +%s) - start))" >"$OUT/.complete"
echo "hnc-go build: done in $(($(date +%s) - start))s into $OUT" >&2
echo "$OUT/manager"
