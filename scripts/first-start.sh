#!/usr/bin/env bash
# A newcomer's first run, as the README tells it: `npm start` (which builds the control plane on a
# fresh machine) until it prints the KUBECONFIG line, a short walk through `kubectl hns`, then
# Ctrl-C as a terminal sends it (to the whole process group). Fails unless every step works, the
# stop is clean (no component "crashed", no "exiting now") and every process is gone within 20 s.
# Its data goes to a folder of its own (XDG_DATA_HOME), so an earlier cluster is neither used nor touched.
set -euo pipefail
cd "$(dirname "$0")/.."
here="$(mktemp -d "${TMPDIR:-/tmp}/hnc-first-start.XXXXXX")"
log="$here/npm-start.log"
pid=""
fail() {
  echo "first start: $*" >&2
  echo "--- npm start's output:" >&2
  cat "$log" >&2 || true
  [ -n "$pid" ] && kill -KILL -- "-$pid" 2>/dev/null || true
  pkill -KILL -f "$here/" 2>/dev/null || true
  exit 1
}
start=$(date +%s)

# `npm start` in a process group of its own, so that a Ctrl-C can be sent to the whole group.
XDG_DATA_HOME="$here/data" setsid npm start >"$log" 2>&1 </dev/null &
pid=$!
# Up to 40 minutes: on a fresh machine the control plane is built first.
for _ in $(seq 1 2400); do
  grep -q '^export KUBECONFIG=' "$log" && break
  kill -0 "$pid" 2>/dev/null || fail "npm start exited before printing the KUBECONFIG"
  sleep 1
done
grep -q '^export KUBECONFIG=' "$log" || fail "no KUBECONFIG line within 40 minutes"
export KUBECONFIG="$(sed -n 's/^export KUBECONFIG=//p' "$log" | head -1)"
kubectl="$(sed -n 's/^a kubectl of the same version: //p' "$log" | head -1)"
[ -x "$kubectl" ] || kubectl="$(command -v kubectl)" || fail "no kubectl"
for _ in $(seq 1 120); do grep -q 'HNC is running' "$log" && break; sleep 1; done
grep -q 'HNC is running' "$log" || fail "HNC did not start within 2 minutes of the KUBECONFIG line"
echo "first start: ready in $(($(date +%s) - start)) s"

# kubectl finds plugins on PATH by name, as after `npm run build:plugin && npm link`.
npm run --silent build:plugin
mkdir -p "$here/bin"
ln -s "$PWD/dist/kubectl-hns.mjs" "$here/bin/kubectl-hns"
export PATH="$here/bin:$PATH"
hns() { "$kubectl" hns "$@"; }
until_true() { # until_true WHAT CMD...: up to 10 s
  local what=$1
  shift
  for _ in $(seq 1 100); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  fail "$what did not happen within 10 s"
}

"$kubectl" create namespace team-a >/dev/null
hns create dev -n team-a
until_true "subnamespace dev" "$kubectl" get namespace dev
hns tree team-a | tee "$here/tree.txt"
grep -q 'dev' "$here/tree.txt" || fail "kubectl hns tree team-a does not show dev"
"$kubectl" create rolebinding leads -n team-a --clusterrole admin --user lead >/dev/null
until_true "the RoleBinding's copy in dev" "$kubectl" get rolebinding leads -n dev
if out=$(hns set team-a --parent dev 2>&1); then fail "a cycle was accepted: $out"; fi
echo "$out"
grep -q 'illegal parent: cycle' <<<"$out" || fail "the cycle was refused without HNC's message: $out"

# Ctrl-C, as a terminal sends it: SIGINT to every process of the group (npm, tsx, HNC).
kill -INT -- "-$pid"
stopped=""
for _ in $(seq 1 200); do
  if ! pgrep -g "$pid" >/dev/null && ! pgrep -f "$here/" >/dev/null; then
    stopped=yes
    break
  fi
  sleep 0.1
done
[ -n "$stopped" ] || fail "processes left 20 s after Ctrl-C: $(pgrep -ag "$pid" || true) $(pgrep -af "$here/" || true)"
if grep -E 'exited unexpectedly|exiting now|restarting it' "$log"; then fail "the stop was not clean"; fi
wait "$pid" || true
rm -rf "$here"
echo "first start: passed in $(($(date +%s) - start)) s"
