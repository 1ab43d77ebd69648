#!/usr/bin/env bash
# The system packages the local node needs (Debian/Ubuntu names): the container runtime and its
# tools, the CNI plugins, the packet filter, and what the local images are made from.
# Installs the missing ones with apt-get when run as root; otherwise says what to install.
set -euo pipefail

# containerd + runc run the pods (runc, not crun: crun refuses hybrid cgroups); the CNI plugins
# wire them to a bridge; iptables/ipset/conntrack for kube-proxy and kube-router; buildah and
# skopeo build the images and hand them to containerd; debootstrap makes the Node base image;
# busybox-static is the test pods' only program; gcc builds the pause program statically.
PACKAGES="containerd runc containernetworking-plugins iptables ipset conntrack buildah skopeo debootstrap busybox-static gcc libc6-dev"

missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "local node: missing packages:$missing. This machine has no apt-get: install them with its package manager." >&2
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  echo "local node: missing packages:$missing. Install them as root: sudo apt-get install -y$missing" >&2
  exit 1
fi
echo "local node: installing$missing ..." >&2
start=$(date +%s)
export DEBIAN_FRONTEND=noninteractive
# containerd's package enables a system service; the node runs its own containerd, so keep the
# package's from starting (policy-rc.d is honoured by invoke-rc.d; removed right after).
policy=/usr/sbin/policy-rc.d
own_policy=""
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && own_policy=1
fi
trap '[ -n "$own_policy" ] && rm -f "$policy"' EXIT
apt-get install -y --no-install-recommends $missing >/dev/null || {
  apt-get update >/dev/null && apt-get install -y --no-install-recommends $missing >/dev/null
} || { echo "local node: apt-get install$missing failed" >&2; exit 1; }
echo "local node: packages installed in $(( $(date +%s) - start ))s" >&2
