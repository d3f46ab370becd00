#!/usr/bin/env bash
# Debian packages the test suite uses as real peers: kubectl (a real client of the cluster API),
# etcd (a real store for the cluster API's etcd backend), docker-registry (a real OCI registry for
# @func/oci), skopeo and umoci (real readers that check the images and layouts @func/oci writes),
# python3-kubernetes and python3-pytest (the Python client, another real client of the cluster API),
# nats-server (the broker's distributed event log, NATS JetStream); for the node agent's oci runtime:
# runc (the OCI runtime), conmon (each container's supervisor), containernetworking-plugins (the pod
# network: bridge, host-local, loopback, portmap), attr (setfattr marks opaque directories of image
# layers for overlayfs) and busybox-static (a small image the tests build);
# zsh and fish, whose completion func-runtime prints (the tests run it in each shell).
# Idempotent; needs root or sudo.
#
# Any kubectl already on PATH is kept: some machine images ship one from another package that owns
# /usr/bin/kubectl, and Debian's kubernetes-client cannot be unpacked over it.
set -euo pipefail
need=()
command -v kubectl >/dev/null 2>&1 || need+=(kubernetes-client)
command -v etcd >/dev/null 2>&1 || need+=(etcd-server)
[ -x /usr/bin/docker-registry ] || need+=(docker-registry)
command -v skopeo >/dev/null 2>&1 || need+=(skopeo)
command -v umoci >/dev/null 2>&1 || need+=(umoci)
# The Python client (a real client of the cluster API) runs under Debian's own python3, whatever
# python3 comes first on PATH.
/usr/bin/python3 -c 'import kubernetes' >/dev/null 2>&1 || need+=(python3-kubernetes)
/usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 || need+=(python3-pytest)
command -v nats-server >/dev/null 2>&1 || need+=(nats-server)
command -v runc >/dev/null 2>&1 || need+=(runc)
command -v conmon >/dev/null 2>&1 || need+=(conmon)
[ -x /usr/lib/cni/bridge ] || need+=(containernetworking-plugins)
command -v setfattr >/dev/null 2>&1 || need+=(attr)
dpkg -s busybox-static >/dev/null 2>&1 || need+=(busybox-static)
command -v zsh >/dev/null 2>&1 || need+=(zsh)
command -v fish >/dev/null 2>&1 || need+=(fish)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
# sed reads to the end: `head -1` may exit before the tool has written all its lines, and the tool's
# SIGPIPE then fails the script under pipefail (exit 141), at random.
kubectl version --client 2>/dev/null | sed -n 1p || true
etcd --version | sed -n 1p
skopeo --version
nats-server --version
