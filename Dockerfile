# The agent-chaos-gate container action. BASE_IMAGE is overridable so CI can build
# it offline from a locally bootstrapped Debian image with python3.
ARG BASE_IMAGE=python:3.12-slim
FROM ${BASE_IMAGE}

LABEL org.opencontainers.image.title="agent-chaos-gate" \
      org.opencontainers.image.description="CI gate for AI agents: mutation, wire-level chaos, contracts, replay" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/agent-chaos-gate/agent-chaos-gate"

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    CHAOS_GATE_PROFILES=/opt/chaos-gate/profiles VIRTUAL_ENV=/opt/chaos-gate/venv PATH=/opt/chaos-gate/venv/bin:$PATH

WORKDIR /opt/chaos-gate
COPY pyproject.toml README.md entrypoint.py ./
COPY gate ./gate
COPY profiles ./profiles
# Every dependency ships wheels: no compiler is needed, and none is left in the image.
RUN python3 -m venv "$VIRTUAL_ENV" \
 && pip install --prefer-binary . \
 && rm -rf /root/.cache

# GitHub runs container actions as root with /github/workspace as the working directory.
USER root
ENTRYPOINT ["python3", "/opt/chaos-gate/entrypoint.py"]
