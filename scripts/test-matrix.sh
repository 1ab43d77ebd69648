#!/usr/bin/env bash
# `npm run test:matrix [-- v1.35.4 ...]`: the integration suite (every file of test/integration, as
# `npm test` runs it) on a local control plane of each supported Kubernetes minor, each built once
# from the official Go modules and cached like the default one (10-25 minutes a version, cold).
# Prints a table of results (docs/deploy.md keeps the latest) and fails if any version failed.
# CI runs it for the oldest supported version; `npm test` covers the newest.
set -uo pipefail
cd "$(dirname "$0")/.."
# One patch release per supported minor (cmd/kubernetes-version.ts: SUPPORTED_MINORS).
VERSIONS="v1.34.4 v1.35.4 v1.36.3 v1.37.2"
[ $# -gt 0 ] && VERSIONS="$*"
logs="$(mktemp -d "${TMPDIR:-/tmp}/hnc-test-matrix.XXXXXX")"
rows=()
failed=0
for v in $VERSIONS; do
  start=$(date +%s)
  if ! HNC_K8S_VERSION="$v" bash local-cluster/build.sh; then
    rows+=("| $v | build failed | | |")
    failed=1
    continue
  fi
  built=$(($(date +%s) - start))
  start=$(date +%s)
  echo "test matrix: the integration suite on Kubernetes $v (log: $logs/$v.log) ..." >&2
  HNC_K8S_VERSION="$v" npx vitest run --project integration >"$logs/$v.log" 2>&1
  rc=$?
  took=$(($(date +%s) - start))
  # vitest's summary line, e.g. "Tests  263 passed (263)", without colours.
  tests="$(sed 's/\x1b\[[0-9;]*m//g' "$logs/$v.log" | sed -n 's/^ *Tests  *//p' | tail -1)"
  if [ $rc -eq 0 ]; then result="passed"; else result="FAILED"; failed=1; fi
  rows+=("| $v | $result | ${tests:-no summary} | ${took} s (build ${built} s) |")
  # On a failure, vitest's own account of it: each failed test with its error and the line.
  [ $rc -eq 0 ] || sed 's/\x1b\[[0-9;]*m//g' "$logs/$v.log" | sed -n '/Failed Tests/,$p' | head -60 >&2
done
echo
echo "| Kubernetes | integration suite | tests | time |"
echo "|---|---|---|---|"
printf '%s\n' "${rows[@]}"
exit $failed
