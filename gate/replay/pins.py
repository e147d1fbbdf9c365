"""The seed corpus: failing cells pinned by id, seed and config digest, run first every time.

A pin whose config changed shape (digest) or whose cell no longer exists is reported
as such in the verdict, never silently dropped.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, UTC
from pathlib import Path

import yaml
from pydantic import BaseModel, Field

from gate.errors import ConfigError


class Pin(BaseModel):
    id: str
    seed: int
    config_digest: str
    reason: str = ""
    pinned_at: str = ""


class Corpus(BaseModel):
    pins: list[Pin] = Field(default_factory=list)


def corpus_path(loaded) -> Path:
    return loaded.base_dir / loaded.config.replay.pins


def read_corpus(path: Path) -> Corpus:
    if not path.exists():
        return Corpus()
    try:
        return Corpus.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")) or {})
    except Exception as exc:
        raise ConfigError(f"{path}: not a valid pin corpus: {exc}") from None


def add_pins(path: Path, pins: list[Pin]) -> list[Pin]:
    corpus = read_corpus(path)
    have = {(p.id, p.seed) for p in corpus.pins}
    added = [p for p in pins if (p.id, p.seed) not in have]
    for p in added:
        p.pinned_at = p.pinned_at or datetime.now(UTC).isoformat(timespec="seconds")
    corpus.pins.extend(added)
    path.write_text("# chaos-gate seed corpus: failing cells that run first on every run.\n"
                    + yaml.safe_dump(corpus.model_dump(), sort_keys=False), encoding="utf-8")
    return added


def pinned_cells(loaded, whole, build) -> tuple[list, list[dict]]:
    """(cells to run first, a status line per pin). `build(seed)` plans under another seed."""
    corpus = read_corpus(corpus_path(loaded))
    first, statuses = [], []
    by_id = {c.id: c for c in whole}
    for pin in corpus.pins:
        status = {"id": pin.id, "seed": pin.seed, "cell": None, "status": "pending"}
        if pin.config_digest != loaded.digest:
            status["status"] = "config_changed"
            statuses.append(status)
            continue
        plan = by_id if pin.seed == loaded.config.seed else {c.id: c for c in build(pin.seed)}
        cell = plan.get(pin.id)
        if cell is None:
            status["status"] = "missing"
        else:
            cid = pin.id if pin.seed == loaded.config.seed else f"{pin.id}@seed{pin.seed}"
            first.append(replace(cell, id=cid))
            status["cell"] = cid
        statuses.append(status)
    return first, statuses
