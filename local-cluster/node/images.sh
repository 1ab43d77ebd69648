#!/usr/bin/env bash
# Builds the local node's images with buildah, with no image pulled from anywhere, and writes each
# as a docker-archive into OUT_DIR for the node's containerd to import:
#   pause.tar    the pod sandbox: a static C program that waits for a signal (cached);
#   busybox.tar  the test pods' image: busybox-static and its applets (cached);
#   hnc-ts.tar   the project's own Dockerfile, unchanged, built on a local Node base image
#                (debootstrap minbase + the `node` on PATH, the pinned LTS in CI, and the npm on
#                PATH; cached per Node and npm version), with no network:
#                `npm ci` in the Dockerfile reads this machine's npm cache, mounted, offline.
# Usage: images.sh OUT_DIR [HNC_IMAGE_REF]    (e.g. localhost/hnc-ts:e2e; without it, no HNC image)
#
# With --hnc-go, only an image of HNC's own Go manager (the e2e swap test, test/e2e/migration.test.ts):
# the static binary bench/hnc-go-build.sh built (CGO disabled) as /manager on an empty base, laid
# out as HNC's Dockerfile's base (distroless static:nonroot: /tmp, the nonroot user 65532,
# ENTRYPOINT /manager); cached per binary (its sha256 in the stored tag), written as ARCHIVE:
#   images.sh --hnc-go MANAGER_BINARY IMAGE_REF ARCHIVE
set -euo pipefail

HNC_GO_BINARY="" HNC_GO_REF="" HNC_GO_ARCHIVE=""
if [ "${1:-}" = --hnc-go ]; then
  HNC_GO_BINARY="${2:?usage: images.sh --hnc-go MANAGER_BINARY IMAGE_REF ARCHIVE}"
  HNC_GO_REF="${3:?usage: images.sh --hnc-go MANAGER_BINARY IMAGE_REF ARCHIVE}"
  HNC_GO_ARCHIVE="${4:?usage: images.sh --hnc-go MANAGER_BINARY IMAGE_REF ARCHIVE}"
  set -- "$(dirname "$HNC_GO_ARCHIVE")"
fi
OUT_DIR="${1:?usage: images.sh OUT_DIR [HNC_IMAGE_REF]}"
HNC_REF="${2:-}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
die() { echo "node images: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "building images needs root (buildah, debootstrap)"
for c in buildah debootstrap gcc busybox; do command -v "$c" >/dev/null || die "$c is missing: run local-cluster/node/packages.sh"; done

CACHE_ROOT="${HNC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hnc-ts}"
STORE="$CACHE_ROOT/images"
mkdir -p "$STORE" "$OUT_DIR"
# buildah's own storage, outside the system's /var/lib/containers, so the images are a cache of
# this project only; runc, not crun (crun refuses hybrid cgroup hierarchies).
B=(buildah --root "$STORE/storage" --runroot "$STORE/run" --storage-driver overlay)
exec 8>"$STORE/.lock"
flock 8
# The node and npm on PATH (.ci/run puts the pinned LTS, scripts/node.sh, first), symlinks resolved.
NODE_BIN="$(readlink -f "$(command -v node)")" || die "no node on PATH"
NPM_DIR="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")" || die "no npm on PATH"
[ -f "$NPM_DIR/package.json" ] && [ -f "$NPM_DIR/bin/npm-cli.js" ] || die "npm on PATH is not an npm package folder: $NPM_DIR"
NODE_VERSION="$("$NODE_BIN" --version)"
NPM_VERSION="$("$NODE_BIN" "$NPM_DIR/bin/npm-cli.js" --version)"
PAUSE_REF=localhost/hnc-pause:1
BUSYBOX_REF=localhost/hnc-busybox:1
# What the base adds to debootstrap's minbase: libatomic1, which Node.js's official Linux binaries
# (22 and later) link against. The ref names the packages too, so a change of them rebuilds it.
BASE_PACKAGES=libatomic1
BASE_REF="localhost/hnc-node-base:${NODE_VERSION#v}-npm${NPM_VERSION}-bookworm-${BASE_PACKAGES//,/-}"
has() { "${B[@]}" inspect --type image "$1" >/dev/null 2>&1; }
scratch() { local dir="$1" ref="$2"; shift 2
  local c; c="$("${B[@]}" from scratch)"
  tar -C "$dir" -cf "$dir.tar" .
  "${B[@]}" add "$c" "$dir.tar" / >/dev/null
  "${B[@]}" config "$@" "$c"
  "${B[@]}" commit --quiet --rm "$c" "$ref" >/dev/null
}
work="$(mktemp -d "${TMPDIR:-/tmp}/hnc-images.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# --- HNC's Go manager (--hnc-go) ---------------------------------------------------------------
if [ -n "$HNC_GO_BINARY" ]; then
  [ -x "$HNC_GO_BINARY" ] || die "no manager binary at $HNC_GO_BINARY"
  # A minimal base holds only a static binary: a dynamically linked one would not start there.
  # (readelf: binutils, which gcc brings.)
  ! readelf -l "$HNC_GO_BINARY" | grep -q 'program interpreter' || die "$HNC_GO_BINARY is not statically linked (build it with CGO_ENABLED=0)"
  stored="${HNC_GO_REF%:*}:${HNC_GO_REF##*:}-$(sha256sum "$HNC_GO_BINARY" | cut -c1-12)"
  if ! has "$stored"; then
    root="$work/hnc-go"
    mkdir -p "$root/etc" "$root/tmp"
    chmod 1777 "$root/tmp"
    cp "$HNC_GO_BINARY" "$root/manager"
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > "$root/etc/passwd"
    printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' > "$root/etc/group"
    scratch "$root" "$stored" --entrypoint '["/manager"]' --user 65532:65532 --workingdir /
    echo "node images: $stored made from $HNC_GO_BINARY" >&2
  fi
  rm -f "$HNC_GO_ARCHIVE"
  "${B[@]}" push --quiet "$stored" "docker-archive:$HNC_GO_ARCHIVE:$HNC_GO_REF" >/dev/null
  exit 0
fi

# --- pause ---------------------------------------------------------------------------------------
if ! has "$PAUSE_REF"; then
  mkdir -p "$work/pause"
  cat > "$work/pause.c" <<'EOF'
#include <signal.h>
#include <unistd.h>
#include <sys/wait.h>
static void reap(int s) { (void)s; while (waitpid(-1, 0, WNOHANG) > 0) {} }
static void quit(int s) { (void)s; _exit(0); }
int main(void) {
  signal(SIGINT, quit); signal(SIGTERM, quit); signal(SIGCHLD, reap);
  for (;;) pause();
}
EOF
  gcc -static -O2 -o "$work/pause/pause" "$work/pause.c"
  scratch "$work/pause" "$PAUSE_REF" --entrypoint '["/pause"]'
fi

# --- busybox -------------------------------------------------------------------------------------
if ! has "$BUSYBOX_REF"; then
  mkdir -p "$work/busybox/bin" "$work/busybox/tmp" "$work/busybox/etc"
  cp /bin/busybox "$work/busybox/bin/busybox"
  for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -s busybox "$work/busybox/bin/$a"; done
  printf 'root:x:0:0::/root:/bin/sh\nnobody:x:65534:65534::/:/bin/sh\n' > "$work/busybox/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\n' > "$work/busybox/etc/group"
  chmod 1777 "$work/busybox/tmp"
  scratch "$work/busybox" "$BUSYBOX_REF" --env PATH=/bin --cmd '["/bin/sh"]'
fi

# --- the Node base image (what node:<major>-slim is to the Dockerfile) ----------------------------
if ! has "$BASE_REF"; then
  start=$(date +%s)
  mirror="$(grep -h -m1 -E '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2; exit}')"
  [ -n "$mirror" ] || mirror="$(awk '$1=="deb"{print $2; exit}' /etc/apt/sources.list 2>/dev/null)"
  mirror="${mirror:-http://deb.debian.org/debian}"
  echo "node images: making the Node base image (debootstrap minbase bookworm from $mirror + node $NODE_VERSION, npm $NPM_VERSION) ..." >&2
  root="$work/base"
  debootstrap --variant=minbase --include="$BASE_PACKAGES" bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || { tail -20 "$work/debootstrap.log" >&2; die "debootstrap failed"; }
  mkdir -p "$root/usr/lib/node_modules" "$root/home/node"
  cp "$NODE_BIN" "$root/usr/bin/node"
  cp -a "$NPM_DIR" "$root/usr/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/bin/npx"
  # The node must run in the image (its shared libraries there), not only on this machine.
  chroot "$root" /usr/bin/node --version >/dev/null 2>"$work/node-check.log" || { cat "$work/node-check.log" >&2; die "node $NODE_VERSION does not run in the base image"; }
  # The node image's unprivileged user, uid 1000, as in the official image.
  echo 'node:x:1000:1000::/home/node:/bin/sh' >> "$root/etc/passwd"
  echo 'node:x:1000:' >> "$root/etc/group"
  chown 1000:1000 "$root/home/node"
  rm -rf "$root/var/cache/apt/"* "$root/var/lib/apt/lists/"* "$root/usr/share/doc" "$root/usr/share/man"
  scratch "$root" "$BASE_REF" --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd '["node"]'
  echo "node images: base image made in $(( $(date +%s) - start ))s" >&2
fi

# --- the project's image, from its Dockerfile --------------------------------------------------------
if [ -n "$HNC_REF" ]; then
start=$(date +%s)
[ -d "$HOME/.npm/_cacache" ] || die "no npm cache in $HOME/.npm: run npm ci once (the image build reads the cache offline)"
printf 'offline=true\naudit=false\nfund=false\nupdate-notifier=false\n' > "$work/npmrc"
echo "node images: building $HNC_REF from the Dockerfile (no network) ..." >&2
"${B[@]}" bud --quiet --layers --runtime /usr/sbin/runc --network none \
  --build-arg "NODE_IMAGE=$BASE_REF" \
  -v "$HOME/.npm:/root/.npm" -v "$work/npmrc:/root/.npmrc:ro" \
  -t "$HNC_REF" -f "$repo/Dockerfile" "$repo" >"$work/bud.log" 2>&1 || { tail -30 "$work/bud.log" >&2; die "building $HNC_REF failed"; }
echo "node images: $HNC_REF built in $(( $(date +%s) - start ))s" >&2
fi

for pair in "pause:$PAUSE_REF" "busybox:$BUSYBOX_REF" ${HNC_REF:+"hnc-ts:$HNC_REF"}; do
  name="${pair%%:*}" ref="${pair#*:}"
  rm -f "$OUT_DIR/$name.tar"
  "${B[@]}" push --quiet "$ref" "docker-archive:$OUT_DIR/$name.tar:$ref" >/dev/null
done
