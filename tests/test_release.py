"""The published Action: action.yml runs the released image of its own version; the release workflow
builds both architectures with SBOM and provenance; the Dockerfile installs the hash-pinned lock
in its own layer before the source, so a source change never reinstalls dependencies."""

from __future__ import annotations

import re
import tomllib

import yaml

from conftest import ROOT


def test_action_runs_the_published_image_of_its_version():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    image = yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["image"]
    assert image == f"docker://ghcr.io/agent-chaos-gate/agent-chaos-gate:v{version}"


def test_release_workflow_builds_both_architectures_with_attestations():
    workflow = yaml.safe_load((ROOT / ".github/workflows/release.yml").read_text())
    assert workflow[True]["push"]["tags"] == ["v*.*.*"]  # YAML reads the key `on` as True
    steps = workflow["jobs"]["image"]["steps"]
    push = next(s for s in steps if s.get("uses", "").startswith("docker/build-push-action"))["with"]
    assert push["platforms"] == "linux/amd64,linux/arm64" and push["sbom"] is True
    assert push["provenance"] == "mode=max" and push["push"] is True
    assert any(s.get("uses", "").startswith("actions/attest-build-provenance") for s in steps)


def test_dockerfile_installs_the_lock_before_the_source():
    lines = [line for line in (ROOT / "Dockerfile").read_text().splitlines() if not line.startswith("#")]
    text = "\n".join(lines)
    lock, install, source = (text.index("COPY requirements.lock"), text.index("--require-hashes"),
                             text.index("COPY gate"))
    assert lock < install < source
    lock_text = (ROOT / "requirements.lock").read_text()
    pins = re.findall(r"^([A-Za-z0-9_.-]+)==(\S+) \\$", lock_text, re.M)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pinned = {name.lower().replace("_", "-"): version for name, version in pins}
    for requirement in project:  # every direct dependency is in the lock at its pyproject pin
        name, version = requirement.split("==")
        assert pinned[name.lower().replace("_", "-")] == version, requirement
    blocks = lock_text.split("==")[1:]
    assert all("--hash=sha256:" in block for block in blocks)
