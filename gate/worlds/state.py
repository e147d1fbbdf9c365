"""A world's state for one cell run: tables of records, seeded, with a fake clock.

Built fresh for every run from the config's seed, so cells never see each other's
writes and the same seed gives the same data. The clock starts at a fixed instant and
moves only when latency faults say so; `sync_lag` hides records younger than the lag.
"""

from __future__ import annotations

import copy
import importlib
import random
from datetime import datetime, timedelta, timezone

from gate.worlds.model import World

EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)
WORDS = ["alpha", "blue", "cedar", "delta", "ember", "fjord", "gale", "harbor"]


class OperationError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def _fake_value(spec, rng: random.Random, n: int):
    if spec == "str":
        return f"{rng.choice(WORDS)}-{rng.randrange(1000)}"
    if spec == "int":
        return rng.randrange(1, 1000)
    if spec == "float":
        return round(rng.uniform(1, 500), 2)
    if spec == "bool":
        return rng.random() < 0.5
    if spec == "datetime":
        return (EPOCH - timedelta(hours=rng.randrange(1, 1000))).isoformat()
    (kind, arg), = spec.items()
    if kind == "enum":
        return rng.choice(arg)
    if kind == "ref":
        return None  # filled in after every table exists
    if kind == "object":
        return {k: _fake_value(v, rng, n) for k, v in arg.items()}
    return [_fake_value(arg, rng, n) for _ in range(rng.randrange(1, 3))]


class WorldState:
    def __init__(self, world: World, seed: int, clock=lambda: 0.0):
        self.world, self.clock = world, clock
        self.tables: dict[str, dict[str, dict]] = {t: {} for t in world.types}
        self.created: dict[tuple[str, str], float] = {}
        for tname, rows in world.seed.rows.items():
            for row in rows:
                self.tables[tname][str(row[world.types[tname].key])] = copy.deepcopy(row)
        self._generate(seed)

    def _generate(self, seed: int) -> None:
        for tname, count in sorted(self.world.seed.generate.items()):
            rtype = self.world.types[tname]
            for n in range(count):
                rng = random.Random(f"{seed}:world:{self.world.name}:{tname}:{n}")
                row = {f: _fake_value(spec, rng, n) for f, spec in rtype.fields.items() if f != rtype.key}
                row[rtype.key] = f"{tname}_{n + 1:04d}"
                self.tables[tname][row[rtype.key]] = row
        for tname, rtype in self.world.types.items():
            for fname, spec in rtype.fields.items():
                if isinstance(spec, dict) and "ref" in spec:
                    targets = sorted(self.tables[spec["ref"]])
                    for rid, row in self.tables[tname].items():
                        if row.get(fname) is None and targets:
                            row[fname] = random.Random(f"{seed}:ref:{tname}:{rid}:{fname}").choice(targets)

    def now(self) -> datetime:
        return EPOCH + timedelta(seconds=self.clock())

    def _visible(self, tname: str, rid: str) -> bool:
        lag = self.world.types[tname].sync_lag
        made = self.created.get((tname, rid))
        return made is None or self.clock() - made >= lag

    def run(self, name: str, args: dict) -> object:
        op = self.world.operations.get(name)
        if op is None:
            raise OperationError(404, f"no operation {name!r}")
        if op.op == "custom":
            module, _, func = op.function.partition(":")
            return getattr(importlib.import_module(module), func)(self, args)
        return getattr(self, f"_{op.op}")(op, dict(args or {}))

    def _get(self, op, args):
        key = self.world.types[op.type].key
        rid = str(args.get(key, args.get("id", "")))
        row = self.tables[op.type].get(rid)
        if row is None or not self._visible(op.type, rid):
            raise OperationError(404, f"{op.type} {rid!r} not found")
        return row

    def _list(self, op, args):
        wanted = {k: v for k, v in args.items() if k in op.filters or not op.filters}
        return [row for rid, row in sorted(self.tables[op.type].items())
                if self._visible(op.type, rid) and all(str(row.get(k)) == str(v) for k, v in wanted.items())]

    def _create(self, op, args):
        rtype = self.world.types[op.type]
        unknown = [k for k in args if k not in rtype.fields and k != rtype.key]
        if unknown:
            raise OperationError(422, f"unknown field(s) for {op.type}: {', '.join(unknown)}")
        rid = str(args.get(rtype.key) or f"{op.type}_{len(self.tables[op.type]) + 1:04d}")
        if rid in self.tables[op.type]:
            raise OperationError(409, f"{op.type} {rid!r} already exists")
        row = {**args, rtype.key: rid}
        for fname, spec in rtype.fields.items():
            if spec == "datetime" and fname not in row:
                row[fname] = self.now().isoformat()
        self.tables[op.type][rid] = row
        self.created[(op.type, rid)] = self.clock()
        return row

    def _update(self, op, args):
        row = self._get(op, args)
        row.update({k: v for k, v in args.items() if k in self.world.types[op.type].fields})
        return row

    def _delete(self, op, args):
        row = self._get(op, args)
        del self.tables[op.type][str(row[self.world.types[op.type].key])]
        return {"deleted": True}

    def snapshot(self) -> dict:
        return copy.deepcopy(self.tables)
