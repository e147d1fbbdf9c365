"""The release scheme, coherent end to end: on main, action.yml builds from the Dockerfile (so `@main`
and `@<sha>` run that very source); the release workflow pushes the image for both architectures with
SBOM and provenance, checks it resolves, and only then tags a release commit whose action.yml names
it by digest and moves the major tag `v1` there — the release script is run here against a local
remote, so a tag can never name an image that does not exist. scripts/pin_action_image.py is the
switch a fork uses for its own image. The Dockerfile installs the hash-pinned lock in its own layer
before the source, so a source change never reinstalls dependencies."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib

import pytest
import yaml

from conftest import ROOT

DIGEST = "sha256:" + "ab" * 32


def release_steps() -> list[dict]:
    return yaml.safe_load((ROOT / ".github/workflows/release.yml").read_text())["jobs"]["release"]["steps"]


def test_main_builds_the_action_from_its_dockerfile():
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"] == {"using": "docker", "image": "Dockerfile"} and (ROOT / "Dockerfile").is_file()
    assert "v0.1.0" not in (ROOT / "action.yml").read_text()  # no tag that was never pushed


def test_release_workflow_pushes_the_image_before_any_tag():
    workflow = yaml.safe_load((ROOT / ".github/workflows/release.yml").read_text())
    assert list(workflow[True]) == ["workflow_dispatch"]  # YAML reads `on` as True; it makes its tags itself
    steps = release_steps()
    at = {name: n for n, s in enumerate(steps) for name in [s.get("uses", "").split("@")[0] or s.get("name", "")]}
    push = steps[at["docker/build-push-action"]]["with"]
    assert push["platforms"] == "linux/amd64,linux/arm64" and push["sbom"] is True
    assert push["provenance"] == "mode=max" and push["push"] is True
    inspect = next(n for n, s in enumerate(steps) if "imagetools inspect" in s.get("run", ""))
    tagging = next(n for n, s in enumerate(steps) if "git push" in s.get("run", ""))
    assert at["docker/build-push-action"] < inspect < at["actions/attest-build-provenance"] < tagging
    names = next(s for s in steps if s.get("id") == "names")["run"]
    assert "ghcr.io/$OWNER/agent-chaos-gate" in names and "IMAGE_OVERRIDE" in names  # a fork's own image
    assert workflow["jobs"]["release"]["env"]["IMAGE_OVERRIDE"] == "${{ vars.CHAOS_GATE_IMAGE }}"


def test_pin_script_rewrites_only_the_image_line(tmp_path):
    sys.path.insert(0, str(ROOT / "scripts"))
    from pin_action_image import pin

    text = (ROOT / "action.yml").read_text()
    pinned = pin(text, f"docker://ghcr.io/you/agent-chaos-gate@{DIGEST}")
    assert yaml.safe_load(pinned)["runs"]["image"] == f"docker://ghcr.io/you/agent-chaos-gate@{DIGEST}"
    assert [a for a, b in zip(text.splitlines(), pinned.splitlines(), strict=True) if a != b] == ["  image: Dockerfile"]
    assert pin(pinned, "Dockerfile") == text
    with pytest.raises(ValueError):
        pin(text, "docker://GHCR.io/Upper:tag")  # registries want lower-case names


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_release_step_tags_a_commit_that_names_the_pushed_digest(tmp_path):
    """The workflow's own tagging script, run against a local remote: v1.2.0 and v1 name the digest,
    main's action.yml still builds from the Dockerfile, and a second release moves v1 on."""
    remote, work = tmp_path / "remote.git", tmp_path / "work"
    git = lambda *a, cwd=work: subprocess.run(["git", *a], cwd=cwd, check=True, capture_output=True, text=True).stdout
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    (work / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "action.yml", work)
    shutil.copy(ROOT / "scripts/pin_action_image.py", work / "scripts")
    git("init", "-q", "-b", "main")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "root")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "source")
    git("remote", "add", "origin", str(remote))
    git("push", "-q", "origin", "main")
    script = next(s for s in release_steps() if "git push" in s.get("run", ""))["run"]
    image = "ghcr.io/acme/agent-chaos-gate"
    for version, digest in (("1.2.0", DIGEST), ("1.3.0", "sha256:" + "cd" * 32)):
        git("checkout", "-q", "main")
        git("reset", "-q", "--hard", "origin/main")  # each release starts from main as pushed, like a fresh checkout
        subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=work, check=True, capture_output=True,
                       env={**os.environ, "VERSION": version, "IMAGE": image, "DIGEST": digest, "MAJOR": "v1"})
        for tag in (f"v{version}", "v1"):
            shown = git("show", f"{tag}:action.yml", cwd=remote)
            assert yaml.safe_load(shown)["runs"]["image"] == f"docker://{image}@{digest}", tag
    assert git("rev-parse", "v1^{commit}", cwd=remote) == git("rev-parse", "v1.3.0^{commit}", cwd=remote)
    assert yaml.safe_load(git("show", "main:action.yml", cwd=remote))["runs"]["image"] == "Dockerfile"


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


def test_the_wheel_ships_every_file_of_the_package(tmp_path):
    """`pip install agent-chaos-gate` gets what the image gets: every tracked file under gate/ (the
    Node instrumentation's .cjs/.mjs, the Python bootstrap, catalogs), not only what setuptools finds
    by default. A file type package-data does not name would be missing from installs, silently.
    Built from a copy of the tracked files: a stale build/ in the checkout must not fill the gaps."""
    import zipfile

    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    tracked = listed.stdout.split()
    source = tmp_path / "src"
    for path in tracked:
        if path.startswith("gate/") or path in ("pyproject.toml", "README.md"):
            (source / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / path, source / path)
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(tmp_path)],
                   check=True, capture_output=True, timeout=300)
    shipped = set(zipfile.ZipFile(next(tmp_path.glob("*.whl"))).namelist())
    missing = sorted(path for path in tracked if path.startswith("gate/") and path not in shipped)
    assert not missing, f"files under gate/ the wheel leaves out (add their type to package-data): {missing}"
