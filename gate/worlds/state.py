"""A world's state for one cell run: tables of records, seeded, checked on every write, on a fake clock.

Built fresh for every run from the config's seed, so cells never see each other's
writes and the same seed gives the same data. `run(operation, arguments)` is what the
agent's calls do (records younger than a type's `sync_lag` stay hidden from its gets and
lists); `insert` / `update_row` / `delete_row` are the world/table API's writes
(gate/worlds/table.py), checked the same way. A rejected write stores nothing.
"""

from __future__ import annotations

import copy
import random
import threading
from pathlib import Path

from gate.worlds.clock import WorldClock
from gate.worlds.errors import OperationError
from gate.worlds.model import World
from gate.worlds.values import fake_value, parse_datetime, stored, value_problems


_FUNCTIONS: dict[tuple[str, str], object] = {}


def function_of(world: World, function: str):
    """A custom operation's function, imported once per (function, directory)."""
    from gate.worlds.custom import resolve

    where = world.code_dir or "."
    key = (function, where)
    if key not in _FUNCTIONS:
        _FUNCTIONS[key] = resolve(function, Path(where))
    return _FUNCTIONS[key]


class WorldState:
    def __init__(self, world: World, seed: int, clock=None):
        self.world = world
        if clock is None or not isinstance(clock, WorldClock):
            clock = WorldClock(world.clock.start, clock or (lambda: 0.0))
        self.clock = clock
        self.lock = threading.RLock()  # a test's thread reads while the proxy's loop serves the agent
        self.revision = 0
        self.tables: dict[str, dict[str, dict]] = {t: {} for t in world.types}
        self.created: dict[tuple[str, str], float] = {}
        start = clock.start
        for tname, rows in world.seed.rows.items():
            rtype = world.types[tname]
            for row in rows:
                row = {k: stored(rtype.fields.get(k), v, start) for k, v in copy.deepcopy(row).items()}
                self.tables[tname][str(row[rtype.key])] = {**row, rtype.key: str(row[rtype.key])}
        self._generate(world.data_seed if world.data_seed is not None else seed)

    def _generate(self, seed: int) -> None:
        start = self.clock.start
        for tname, count in sorted(self.world.seed.generate.items()):
            rtype = self.world.types[tname]
            for n in range(count):
                rng = random.Random(f"{seed}:world:{self.world.name}:{tname}:{n}")
                row = {f: fake_value(spec, rng, start) for f, spec in rtype.fields.items() if f != rtype.key}
                rid = self._next_id(tname)
                self.tables[tname][rid] = {rtype.key: rid, **row}
        for tname, rtype in self.world.types.items():
            for fname, spec in rtype.fields.items():
                if isinstance(spec, dict) and "ref" in spec:
                    targets = sorted(self.tables[spec["ref"]])
                    for rid, row in self.tables[tname].items():
                        if row.get(fname) is None and targets:
                            row[fname] = random.Random(f"{seed}:ref:{tname}:{rid}:{fname}").choice(targets)

    def _next_id(self, tname: str) -> str:
        rows, rtype = self.tables[tname], self.world.types[tname]
        n = len(rows) + 1
        make = (lambda i: str(i)) if rtype.ids == "sequential" else (lambda i: f"{tname}_{i:04d}")
        while make(n) in rows:
            n += 1
        return make(n)

    def now(self):
        return self.clock.now()

    # -- ages --------------------------------------------------------------------------
    def age(self, tname: str, row: dict) -> float | None:
        """Seconds since the record was made: its dating field, else when it was created here."""
        field = self.world.types[tname].dated_by()
        if field and row.get(field):
            try:
                return (self.clock.now() - parse_datetime(row[field], self.clock.start)).total_seconds()
            except ValueError:
                pass
        made = self.created.get((tname, str(row.get(self.world.types[tname].key))))
        return None if made is None else self.clock.seconds() - made

    def _visible(self, tname: str, row: dict) -> bool:
        lag = self.world.types[tname].sync_lag
        if not lag:
            return True
        age = self.age(tname, row)
        return age is None or age >= lag

    # -- the agent's operations ----------------------------------------------------------
    def run(self, name: str, args: dict) -> object:
        op = self.world.operations.get(name)
        if op is None:
            raise OperationError(404, f"no operation {name!r} (known: {', '.join(self.world.operations)})")
        if args is not None and not isinstance(args, dict):
            raise OperationError(422, f"{name}: arguments must be an object")
        with self.lock:
            try:
                if op.op == "custom":
                    from gate.worlds.custom import call
                    from gate.worlds.table import WorldView

                    from gate.worlds.custom import CodeError

                    try:
                        func = function_of(self.world, op.function)
                    except CodeError as exc:
                        raise OperationError(500, f"custom operation {name}: {exc}") from None
                    return call(func, WorldView(self), self.clock, dict(args or {}), name)
                return getattr(self, f"_{op.op}")(op, dict(args or {}))
            finally:
                if self.world.clock.per_call:
                    self.clock.advance(self.world.clock.per_call)

    def target(self, name: str, args: dict) -> tuple[str, dict] | None:
        """(type, record) a get/update/delete names, if it exists: what record-age faults look at."""
        op = self.world.operations.get(name)
        if op is None or op.op not in ("get", "update", "delete") or not isinstance(args, dict):
            return None
        key = self.world.types[op.type].key
        row = self.tables[op.type].get(str(args.get(key, args.get("id", ""))))
        return (op.type, row) if row is not None else None

    def _get(self, op, args):
        key = self.world.types[op.type].key
        rid = str(args.get(key, args.get("id", "")))
        row = self.tables[op.type].get(rid)
        if row is None or not self._visible(op.type, row):
            raise OperationError(404, f"{op.type} {rid!r} not found")
        return copy.deepcopy(row)

    def _list(self, op, args):
        wanted = {k: v for k, v in args.items() if v is not None and (k in op.filters or not op.filters)}
        return [copy.deepcopy(row) for row in self.tables[op.type].values()
                if self._visible(op.type, row) and all(str(row.get(k)) == str(v) for k, v in wanted.items())]

    def _create(self, op, args):
        return copy.deepcopy(self.insert(op.type, {k: v for k, v in args.items() if v is not None}, status=422))

    def _update(self, op, args):
        row = self._get(op, args)
        key = self.world.types[op.type].key
        fields = {k: v for k, v in args.items() if k not in (key, "id") and v is not None}
        return copy.deepcopy(self.update_row(op.type, str(row[key]), fields, status=422))

    def _delete(self, op, args):
        row = self._get(op, args)
        self.delete_row(op.type, str(row[self.world.types[op.type].key]))
        return {"deleted": True}

    # -- writes (the agent's and the world/table API's) ------------------------------------
    def _problems(self, tname: str, fields: dict, creating: bool) -> list[str]:
        rtype = self.world.types[tname]
        unknown = [k for k in fields if k not in rtype.fields and k != rtype.key]
        out = [f"unknown field(s) for {tname}: {', '.join(unknown)} (fields: {', '.join(rtype.fields)})"] \
            if unknown else []

        def refs(target: str, rid: str) -> bool:
            return rid in self.tables.get(target, {})
        for name, value in fields.items():
            if name in rtype.fields and not (name == rtype.key and creating):
                out += value_problems(rtype.fields[name], value, name, refs)
        return out

    def insert(self, tname: str, fields: dict, status: int | None = None) -> dict:
        """A new record, checked; `status` set: an OperationError (an agent's write), else ValueError."""
        with self.lock:
            rtype = self.world.types[tname]
            problems = self._problems(tname, fields, creating=True)
            if problems:
                self._refuse(f"{tname} not created: " + "; ".join(problems), status)
            rid = str(fields.get(rtype.key) or self._next_id(tname))
            if rid in self.tables[tname]:
                self._refuse(f"{tname} {rid!r} already exists", status and 409, KeyError)
            row = {rtype.key: rid, **{k: stored(rtype.fields.get(k), v, self.clock.start)
                                      for k, v in fields.items() if k != rtype.key}}
            for fname, spec in rtype.fields.items():
                if spec == "datetime" and fname not in row:
                    row[fname] = self.now().isoformat()
            self.tables[tname][rid] = row
            self.created[(tname, rid)] = self.clock.seconds()
            self.revision += 1
            return row

    def update_row(self, tname: str, rid: str, fields: dict, status: int | None = None) -> dict:
        with self.lock:
            row = self.tables[tname].get(rid)
            if row is None:
                self._refuse(f"{tname} {rid!r} not found", status and 404, KeyError)
            key = self.world.types[tname].key
            problems = self._problems(tname, {k: v for k, v in fields.items() if k != key}, creating=False)
            if problems:
                self._refuse(f"{tname} {rid!r} not updated: " + "; ".join(problems), status)
            spec = self.world.types[tname].fields
            row.update({k: stored(spec.get(k), v, self.clock.start) for k, v in fields.items() if k != key})
            self.revision += 1
            return row

    def delete_row(self, tname: str, rid: str) -> bool:
        with self.lock:
            if self.tables[tname].pop(rid, None) is None:
                return False
            self.revision += 1
            return True

    @staticmethod
    def _refuse(message: str, status: int | None, kind=ValueError):
        if status is not None:
            raise OperationError(status, message)
        raise kind(message)

    def snapshot(self) -> dict:
        with self.lock:
            return copy.deepcopy(self.tables)
