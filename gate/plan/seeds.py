"""One root seed drives everything (TigerBeetle-style): sub-seeds are derived, never drawn.

Derivation hashes the path of names, so a cell's seed depends only on the root seed
and the cell's id, never on which cells ran before it or on which worker.
"""

from __future__ import annotations

import hashlib
import random


def derive_seed(root: int, *parts: object) -> int:
    key = ":".join([str(root), *map(str, parts)])
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") >> 1


def rng_for(*parts: object) -> random.Random:
    """A private, string-seeded RNG (SHA-512 based, identical in every process)."""
    return random.Random(":".join(map(str, parts)))
