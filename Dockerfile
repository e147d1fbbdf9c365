# The agent-chaos-gate container action, published as ghcr.io/agent-chaos-gate/agent-chaos-gate
# by .github/workflows/release.yml. BASE_IMAGE is overridable so CI can build it offline from a
# locally bootstrapped Debian image with python3.
#
# Layers, from the least to the most often changed: the dependencies (only when
# requirements.lock changes), then the profiles, then the source. A source change
# rebuilds the last layer only: seconds, no download.
ARG BASE_IMAGE=python:3.12-slim
FROM ${BASE_IMAGE}

LABEL org.opencontainers.image.title="agent-chaos-gate" \
      org.opencontainers.image.description="CI gate for AI agents: mutation, wire-level chaos, contracts, replay" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/agent-chaos-gate/agent-chaos-gate"

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    CHAOS_GATE_PROFILES=/opt/chaos-gate/profiles VIRTUAL_ENV=/opt/chaos-gate/venv \
    PYTHONPATH=/opt/chaos-gate PATH=/opt/chaos-gate/venv/bin:$PATH

# Hash-pinned wheels only (no compiler, no sdist, no resolver surprises); pip itself is removed
# afterwards, in the same layer, so it costs nothing in the image.
COPY requirements.lock /opt/chaos-gate/requirements.lock
RUN python3 -m venv "$VIRTUAL_ENV" \
 && pip install --no-deps --only-binary=:all: --require-hashes -r /opt/chaos-gate/requirements.lock \
 && (pip uninstall -y -q pip setuptools 2>/dev/null || true) \
 && printf '#!/bin/sh\nexec python3 -m gate "$@"\n' > "$VIRTUAL_ENV/bin/chaos-gate" \
 && chmod +x "$VIRTUAL_ENV/bin/chaos-gate" \
 && find "$VIRTUAL_ENV" -name '*.pyi' -delete \
 && rm -rf /root/.cache

# libfaketime for agent.time_scale (the agent's clock N times fast): the Debian package, whose build
# dilates sleeps and poll timeouts (the PyPI wheel's build hangs in time.sleep under a speed-up). apt's
# package caches (/var/cache/apt/*.bin, ~60 MB) go in the same layer: bases without docker-clean keep them.
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libfaketime >/dev/null \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/cache/debconf/*-old /var/log/apt /var/log/dpkg.log

# The unprivileged users the agent and its services run as while the gate stays root (docs/security.md,
# gate/agent/separation.py): two, so the agent cannot read a service's /proc either. They own nothing of
# the image, the workspace or the runner's files.
# chaos-agent-1..7: one more for each concurrent agent instance, so no instance reads another's /proc.
RUN useradd --system --create-home --shell /usr/sbin/nologin chaos-agent \
 && useradd --system --create-home --shell /usr/sbin/nologin chaos-service \
 && for n in 1 2 3 4 5 6 7; do useradd --system --no-create-home --shell /usr/sbin/nologin "chaos-agent-$n"; done

WORKDIR /opt/chaos-gate
COPY profiles ./profiles
COPY entrypoint.py ./
COPY gate ./gate
# PYTHONDONTWRITEBYTECODE keeps the image read-only at run time, so the bytecode is made here: without
# it every start compiles the whole package (~80 ms before `validate` does anything).
RUN python3 -m compileall -q gate

# GitHub runs container actions as root with /github/workspace as the working directory. The gate stays
# root so that it can start the agent as chaos-agent: the agent never runs as root.
USER root
ENTRYPOINT ["python3", "/opt/chaos-gate/entrypoint.py"]
