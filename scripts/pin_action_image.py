#!/usr/bin/env python3
"""Point action.yml's `runs.image` at an image: the release job's switch, and a fork's.

On main, action.yml says `image: Dockerfile`: `uses: …@main` (or @<sha>) builds that very
commit. The release workflow pushes the image, then runs this with the pushed digest on the
release commit it tags (`docker://ghcr.io/<owner>/agent-chaos-gate@sha256:…`), so a tag only
ever names an image that exists. A fork or a vendored copy points at its own image the same way:

    python3 scripts/pin_action_image.py docker://ghcr.io/you/agent-chaos-gate@sha256:<digest>
    python3 scripts/pin_action_image.py Dockerfile        # back to building from source

Only the `image:` line changes; comments and every other line are kept byte for byte.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ACTION = Path(__file__).resolve().parent.parent / "action.yml"
IMAGE = re.compile(r"^docker://[a-z0-9][a-z0-9._/-]*(?::[A-Za-z0-9._-]+)?(?:@sha256:[0-9a-f]{64})?$")
LINE = re.compile(r"^(  image:)[ \t]*\S.*$", re.M)


def pin(text: str, image: str) -> str:
    """action.yml's text with `runs.image` set to `image` (Dockerfile or docker://name[:tag][@sha256:…])."""
    if image != "Dockerfile" and not IMAGE.match(image):
        raise ValueError(f"{image!r}: expected Dockerfile or docker://<lower-case name>[:tag][@sha256:<64 hex>]")
    if len(LINE.findall(text)) != 1:
        raise ValueError("action.yml: expected exactly one `  image:` line under runs")
    return LINE.sub(lambda m: f"{m.group(1)} {image}", text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("image", help="Dockerfile, or docker://registry/name[:tag][@sha256:digest]")
    parser.add_argument("--action", type=Path, default=ACTION, help="the action.yml to rewrite")
    args = parser.parse_args(argv)
    try:
        args.action.write_text(pin(args.action.read_text(encoding="utf-8"), args.image), encoding="utf-8")
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"pin_action_image: {exc}\n")
        return 2
    print(f"{args.action}: runs.image = {args.image}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
