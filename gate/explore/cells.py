"""Explored points as the plan's cells: the same Cell the runner runs for a written scenario.

An explored cell is a chaos cell of scenario `explore`, so it is sharded, selected with `--only`,
scored, reported and reproduced like any other; its faults are validated by the config's own
fault union, so what it runs is exactly the YAML a finding pins (gate/explore/findings.py).
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import TypeAdapter

from gate.config.chaos import Fault
from gate.config.models import Config
from gate.explore.planner import SCENARIO, Point
from gate.plan import Cell
from gate.plan.cells import applicable_ids, input_fields
from gate.plan.seeds import derive_seed


@lru_cache(maxsize=1)
def _faults() -> TypeAdapter:
    return TypeAdapter(Fault)


def faults_key(faults) -> tuple[str, ...]:
    """What a cell's faults are, compared across written scenarios and explored points."""
    return tuple(f.model_dump_json() for f in faults)


def point_key(point: Point) -> tuple[str, ...]:
    return faults_key(_faults().validate_python(f) for f in point.faults)


def _probe(point: Point, said: dict) -> tuple | None:
    """The probe session's (input id, turns, history), when the proxy can tell its calls from the cell's own:
    neither first turn may contain the other (its model calls are told apart by that text)."""
    probe = point.reference.probe
    if not probe or probe["input"] not in said:
        return None
    turns, history = said[probe["input"]]
    first, own = turns[0], said[point.input_id][0][0]
    return None if first in own or own in first else (probe["input"], turns, history)


def cells_for(points: list[Point], config: Config, texts: dict[str, str], first_index: int) -> list[Cell]:
    """One cell per point, numbered after the plan's own cells."""
    adapter = _faults()
    conversations = {i.id: input_fields(i) for i in config.inputs if i.turns is not None}
    said = {i.id: (tuple(i.turn_texts()) if i.turns is not None else (i.text,), i.history) for i in config.inputs}
    out = []
    for n, point in enumerate(points):
        facts = {"stage": "chaos", "input": point.input_id, "mutation": None, "scenario": SCENARIO}
        text = texts[point.input_id]
        # a conversation's explored cell runs the whole conversation, its faults over every turn's calls
        fields = conversations.get(point.input_id) or dict(text=text, original_text=text)
        out.append(Cell(id=point.id, index=first_index + n, stage="chaos", input_id=point.input_id,
                        seed=derive_seed(config.seed, point.id), scenario=SCENARIO,
                        invariants=applicable_ids(config, facts),
                        faults=tuple(adapter.validate_python(f) for f in point.faults), reference=point.reference,
                        probe=_probe(point, said), **fields))
    return out
