#!/usr/bin/env bash
# `npm run kind:up`: hnc-ts on a local kind cluster, for users with Docker and kind.
#   1. creates the kind cluster (reuses it when it exists),
#   2. builds the manager image from ./Dockerfile and loads it into the cluster's nodes,
#   3. renders deploy/ into dist/install.yaml (the same manifests as a real install) and applies it,
#   4. waits until the manager is rolled out and has registered its webhooks.
# Environment: HNC_KIND_CLUSTER (default hnc), HNC_IMAGE (default hnc-ts:<package version>),
# HNC_WAIT_SECONDS (default 180). `npm run kind:down` deletes the cluster.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cluster="${HNC_KIND_CLUSTER:-hnc}"
image="${HNC_IMAGE:-hnc-ts:$(node -p 'require("./package.json").version')}"
wait_s="${HNC_WAIT_SECONDS:-180}"
wait="${wait_s}s"
context="kind-${cluster}"
ns=hnc-system
deployment=hnc-controller-manager

for tool in docker kind kubectl node; do
  command -v "$tool" >/dev/null || { echo "kind:up needs $tool on the PATH" >&2; exit 1; }
done

if kind get clusters 2>/dev/null | grep -qx "$cluster"; then
  echo "==> using the existing kind cluster $cluster"
else
  echo "==> creating the kind cluster $cluster"
  kind create cluster --name "$cluster" --wait "$wait"
fi

echo "==> building $image"
docker build -t "$image" .
echo "==> loading $image into $cluster"
kind load docker-image "$image" --name "$cluster"

echo "==> applying dist/install.yaml"
npx tsx scripts/build-install.ts --image "$image" --out dist/install.yaml
existed=false
kubectl --context "$context" -n "$ns" get deployment "$deployment" >/dev/null 2>&1 && existed=true
kubectl --context "$context" apply --server-side -f dist/install.yaml
# The tag is reused between builds: restart so the pods run the image just loaded.
if [ "$existed" = true ]; then
  kubectl --context "$context" -n "$ns" rollout restart deployment "$deployment"
fi

echo "==> waiting for the manager (up to $wait)"
if ! kubectl --context "$context" -n "$ns" rollout status deployment "$deployment" --timeout "$wait"; then
  kubectl --context "$context" -n "$ns" get pods -o wide >&2 || true
  kubectl --context "$context" -n "$ns" logs "deployment/$deployment" --tail 50 >&2 || true
  exit 1
fi
# Ready replicas have synced caches and serve webhooks; the configurations carry the CA bundle.
deadline=$((SECONDS + wait_s))
until [ -n "$(kubectl --context "$context" get validatingwebhookconfiguration hnc-validating-webhook-configuration \
  -o jsonpath='{.webhooks[0].clientConfig.caBundle}' 2>/dev/null)" ]; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "the manager did not register its webhook configurations within $wait" >&2
    kubectl --context "$context" -n "$ns" logs "deployment/$deployment" --tail 50 >&2 || true
    exit 1
  fi
  sleep 2
done

echo "==> hnc-ts is running on kind cluster $cluster. Try:"
echo "    kubectl config use-context $context"
echo "    kubectl create namespace team-a"
echo "    kubectl hns create dev -n team-a && kubectl hns tree team-a   # after: npm run build:plugin && npm link"
