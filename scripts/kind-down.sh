#!/usr/bin/env bash
# `npm run kind:down`: deletes the kind cluster that `npm run kind:up` created (HNC_KIND_CLUSTER,
# default hnc), and everything in it.
set -euo pipefail
cluster="${HNC_KIND_CLUSTER:-hnc}"
command -v kind >/dev/null || { echo "kind:down needs kind on the PATH" >&2; exit 1; }
if kind get clusters 2>/dev/null | grep -qx "$cluster"; then
  kind delete cluster --name "$cluster"
else
  echo "no kind cluster named $cluster"
fi
