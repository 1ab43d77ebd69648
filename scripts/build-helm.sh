#!/usr/bin/env bash
# Builds helm (the chart tests' `helm template` and `helm lint`, and the e2e `helm install`) from
# its official Go module, helm.sh/helm/v3/cmd/helm at a pinned version, through the Go module
# proxy, into a cache outside the repo keyed by helm's and Go's versions (next to the control
# plane's build, which it does not touch). Idempotent: returns at once when a finished build is
# present. `--print-path` prints the binary's path.
set -euo pipefail

HELM_VERSION="${HNC_HELM_VERSION:-v3.22.0}"

die() { echo "helm build: $*" >&2; exit 1; }

# A helm of your own (HNC_HELM): nothing to build.
if [ -n "${HNC_HELM:-}" ]; then
  [ -x "$HNC_HELM" ] || die "HNC_HELM=$HNC_HELM is not an executable file"
  [ "${1:-}" = "--print-path" ] && echo "$HNC_HELM"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  die "Go is not installed. Install Go 1.26 or newer (https://go.dev/doc/install), or set HNC_HELM to a helm binary."
fi
GOVER="$(go env GOVERSION)"
case "$GOVER" in go1.2[6-9]*|go1.[3-9]*) ;; *) die "Go $GOVER is too old: helm $HELM_VERSION needs Go 1.26 or newer.";; esac

CACHE_ROOT="${HNC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hnc-ts}"
OUT="$CACHE_ROOT/helm/${HELM_VERSION}-${GOVER}"
complete() { [ -f "$OUT/.complete" ] && [ -x "$OUT/helm" ]; }
done_() {
  [ "${1:-}" = "--print-path" ] && echo "$OUT/helm"
  exit 0
}
complete && done_ "${1:-}"
# As local-cluster/build.sh: one build at a time (lock, then look again), into a scratch folder
# renamed into place, so the cache holds either nothing or a complete build.
mkdir -p "$CACHE_ROOT/helm"
exec 9>"$CACHE_ROOT/helm/.build.lock"
if ! flock -n 9; then
  echo "helm build: another build is running; waiting for it ..." >&2
  flock 9
fi
complete && done_ "${1:-}"
PARTIAL="$(mktemp -d "$CACHE_ROOT/helm/.partial.XXXXXX")"
chmod 755 "$PARTIAL"
trap 'rm -rf "$PARTIAL"' EXIT
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
start=$(date +%s)

# helm's Makefile sets its version and the Kubernetes version that `helm template` and `helm lint`
# assume (.Capabilities.KubeVersion) from the client-go it was built with: do the same.
echo "helm build: resolving helm.sh/helm/v3@$HELM_VERSION ..." >&2
GOMOD="$(cd "$PARTIAL" && go list -m -f '{{.GoMod}}' "helm.sh/helm/v3@$HELM_VERSION")" \
  || die "the Go module proxy did not serve helm.sh/helm/v3@$HELM_VERSION (set HNC_HELM_VERSION to one it serves)"
CLIENT_GO="$(awk '$1=="k8s.io/client-go"{print $2; exit}' "$GOMOD")"
[ -n "$CLIENT_GO" ] || die "helm $HELM_VERSION's go.mod names no k8s.io/client-go version"
K8S_MINOR="$(echo "$CLIENT_GO" | cut -d. -f2)"
X="-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  X="$X -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$K8S_MINOR"
done
echo "helm build: compiling helm $HELM_VERSION (a cold build takes a few minutes on 2 cores) ..." >&2
(cd "$PARTIAL" && GOBIN="$PARTIAL" go install -trimpath -ldflags="-s -w $X" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION") \
  || die "compiling helm failed (see above)"

# A whole output, no `| head`: a closed pipe is a SIGPIPE, a failure under pipefail.
"$PARTIAL/helm" version --short >&2
printf 'helm=%s\ngo=%s\nseconds=%s\n' "$HELM_VERSION" "$GOVER" "$(( $(date +%s) - start ))" > "$PARTIAL/.complete"
rm -rf "$OUT"
mv "$PARTIAL" "$OUT"
trap - EXIT
echo "helm build: done in $(( $(date +%s) - start ))s into $OUT" >&2
done_ "${1:-}"
