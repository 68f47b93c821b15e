#!/usr/bin/env bash
# Installs the Debian packages pfi builds and tests with, only those missing.
# Run by `make demo`, `make test` and `make bench`; safe to run again.
set -euo pipefail

PKGS=(
  build-essential cmake pkg-config clang clang-format libclang-rt-14-dev
  libgsl-dev libjansson-dev libsqlite3-dev sqlite3
  libmicrohttpd-dev libcurl4-openssl-dev
  libplplot-dev plplot-driver-cairo
  libcmocka-dev
  libprotobuf-c-dev protobuf-c-compiler
  protobuf-compiler python3-protobuf python3-grpcio
  prometheus curl python3 python3-yaml python3-jsonschema
  slurm-wlm munge libslurm-dev
  mandoc
  etcd-server etcd-client python3-scipy iproute2
  libglpk-dev
  chromium
)

# kubectl validates contrib/kubernetes (`kubectl apply --dry-run=client`):
# Debian's is kubernetes-client, which conflicts with another kubectl
# package (Google Cloud's) that a machine may already have.
command -v kubectl >/dev/null || PKGS+=(kubernetes-client)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# The prometheus package starts a service on install where systemd runs; tests
# start their own server on a free port, so the system one is not needed.
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
