"""The Action image: its size, and how fast it rebuilds after a one-line source change.

    python3 bench/bench_image.py [--base python:3.12-slim]

Builds the Dockerfile from a copy of the build context (the repository is never touched),
then appends one comment line to gate/__init__.py in the copy and rebuilds: only the
source layer should rebuild, the dependency layer comes from the cache. Prints the image
size, the size of the base and of the layers this Dockerfile adds, and both build times.
No registry is reachable in this project's CI, so it builds on `local/python-base` there
(.ci/docker-up.sh); the 200 MB budget is for python:3.12-slim, i.e. base + added layers.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTEXT = ["Dockerfile", ".dockerignore", "requirements.lock", "entrypoint.py", "profiles", "gate"]


def copy_context(into: Path) -> Path:
    for name in CONTEXT:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, into / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, into / name)
    return into


def build(context: Path, tag: str, base: str) -> tuple[float, str]:
    """(seconds, build log)."""
    began = time.monotonic()
    proc = subprocess.run(["docker", "build", "--network", "host", "--build-arg", f"BASE_IMAGE={base}", "-t", tag,
                           str(context)], capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"docker build failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return time.monotonic() - began, proc.stdout + proc.stderr


def size_mb(image: str) -> float:
    out = subprocess.run(["docker", "image", "inspect", image, "--format", "{{.Size}}"], capture_output=True,
                         text=True, check=True).stdout
    return int(out.strip()) / 1e6


def measure(base: str, tag: str = "agent-chaos-gate:bench") -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        context = copy_context(Path(tmp))
        first, _ = build(context, tag, base)
        with open(context / "gate" / "__init__.py", "a", encoding="utf-8") as fh:
            fh.write(f"# bench_image: a one-line source change {time.time()}\n")
        rebuild, log = build(context, tag, base)
    image, base_size = size_mb(tag), size_mb(base)
    return {"base": base, "image_mb": round(image, 1), "base_mb": round(base_size, 1),
            "added_mb": round(image - base_size, 1), "first_build_s": round(first, 1),
            "cached_rebuild_s": round(rebuild, 1), "deps_layer_cached": deps_cached(log)}


def deps_cached(log: str) -> bool:
    """Did the dependency layer (the pip install RUN) come from the cache on the rebuild?"""
    lines = log.splitlines()
    for n, line in enumerate(lines):
        if "pip install" in line and "RUN" in line:
            around = " ".join(lines[n:n + 3])
            return "Using cache" in around or "CACHED" in line
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="local/python-base", help="BASE_IMAGE (python:3.12-slim where reachable)")
    args = parser.parse_args()
    result = measure(args.base)
    print(json.dumps(result, indent=2))
    print(f"image {result['image_mb']} MB on {args.base} ({result['base_mb']} MB base + {result['added_mb']} MB "
          f"added); cached rebuild after a one-line change: {result['cached_rebuild_s']} s "
          f"(dependency layer cached: {result['deps_layer_cached']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
