"""Request and response body excerpts of the failing cells' exchanges, for report.html.

They are kept out of the verdict part (an agent may put a random id in a body, and the
verdict must be byte-stable), bounded (a few KB per exchange, failing cells only), and
redacted with the rest of report.json. Bytes that are not text are shown as a size.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

EXCERPT_CHARS = 2000
MAX_STEPS = 60  # per run: a runaway agent's thousand calls would bury the file


class BodyPair(BaseModel):
    request: str = ""
    response: str = ""


class CellExchanges(BaseModel):
    id: str
    runs: list[list[BodyPair]] = Field(default_factory=list, description="Per run, per trace step.")


def excerpt(data: bytes, limit: int = EXCERPT_CHARS) -> str:
    """Readable text of a body's first bytes; binary as its size only."""
    if not data:
        return ""
    head = data[: limit * 2]
    if sum(b < 9 or 13 < b < 32 for b in head[:512]) > 8:
        return f"({len(data)} bytes, binary)"
    text = head.decode("utf-8", "replace")
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit}+ more characters)"


def cell_exchanges(results, pool) -> list[CellExchanges]:
    """For each cell that did not pass, the body excerpts of every run, in run order."""
    failing = {c.id for c in results if c.status != "pass"}
    by_cell: dict[str, dict[int, list[BodyPair]]] = {}
    for item, steps in pool.bodies.items():
        if item.cell.id in failing:
            pairs = [BodyPair(request=excerpt(req), response=excerpt(resp)) for req, resp in steps[:MAX_STEPS]]
            by_cell.setdefault(item.cell.id, {})[item.run] = pairs
    return [CellExchanges(id=c.id, runs=[by_cell[c.id].get(r, []) for r in range(max(by_cell[c.id]) + 1)])
            for c in results if c.id in by_cell]
