#!/usr/bin/env bash
# Debian packages the test suite uses as real peers: kubectl (a real client of the cluster API)
# and etcd (a real store for the cluster API's etcd backend). Idempotent; needs root or sudo.
set -euo pipefail
need=()
dpkg -s kubernetes-client >/dev/null 2>&1 || need+=(kubernetes-client)
dpkg -s etcd-server >/dev/null 2>&1 || need+=(etcd-server)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
