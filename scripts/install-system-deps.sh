#!/usr/bin/env bash
# Debian packages the test suite uses as real peers: kubectl (a real client of the cluster API),
# etcd (a real store for the cluster API's etcd backend) and nats-server (the broker's distributed
# event log, NATS JetStream). Idempotent; needs root or sudo.
#
# Any kubectl already on PATH is kept: some machine images ship one from another package that owns
# /usr/bin/kubectl, and Debian's kubernetes-client cannot be unpacked over it.
set -euo pipefail
need=()
command -v kubectl >/dev/null 2>&1 || need+=(kubernetes-client)
command -v etcd >/dev/null 2>&1 || need+=(etcd-server)
command -v nats-server >/dev/null 2>&1 || need+=(nats-server)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
# sed reads to the end: `head -1` may exit before the tool has written all its lines, and the tool's
# SIGPIPE then fails the script under pipefail (exit 141), at random.
kubectl version --client 2>/dev/null | sed -n 1p || true
etcd --version | sed -n 1p
nats-server --version
