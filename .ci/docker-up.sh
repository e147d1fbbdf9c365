#!/usr/bin/env bash
# Start a real Docker engine and build the offline base image the tests use.
# Idempotent: a running engine and an existing image are reused.
set -euo pipefail
if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io debootstrap >/dev/null
fi
if ! docker info >/dev/null 2>&1; then
  (dockerd --iptables=false --bridge=none >/tmp/dockerd.log 2>&1 &)
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
  docker info >/dev/null
fi
if ! docker image inspect local/python-base >/dev/null 2>&1; then
  root=$(mktemp -d)
  debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$root" >/tmp/debootstrap.log 2>&1
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
  tar -C "$root" -c . | docker import - local/python-base >/dev/null
  rm -rf "$root"
fi
echo "docker engine and local/python-base ready"
