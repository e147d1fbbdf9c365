"""The world/table API: what custom operations and tests read and write a live world through.

    world.orders                      # a Table, by record type name (also world.table("orders"))
    world.orders.get("3")             # a Record or None; row.status and row["status"] both work
    world.orders.all() / .where(status="delivered") / .pick(status="delivered") / .count(...)
    world.orders.insert(total=9.5)    # validated like the agent's writes; the id is assigned
    world.orders.update("3", status="returned")   # KeyError if missing, ValueError if invalid
    world.orders.delete("3")          # True if it was there
    before = world.snapshot(); ...; world.diff(before)   # Diff: added, removed, changed
    world.revision                    # bumps on every write; world.clock / world.now()

Records are copies: a write goes through insert/update, so it is always checked.
`pick` is the first match in insertion order (seeded rows, then generated, then created),
so the same seed picks the same record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class Record:
    """One row: attribute (`row.status`) and item (`row["status"]`) access, `to_dict()`."""

    __slots__ = ("_data",)

    def __init__(self, data: dict):
        object.__setattr__(self, "_data", dict(data))

    def __getattr__(self, name: str) -> Any:
        try:
            return self._data[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self._data[name] = value  # a local change only: write with Table.update

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._data[key] = value

    def __contains__(self, key: str) -> bool:
        return key in self._data

    def __iter__(self):
        return iter(self._data)

    def keys(self):
        return self._data.keys()

    def items(self):
        return self._data.items()

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def to_dict(self) -> dict:
        return dict(self._data)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Record):
            return self._data == other._data
        return isinstance(other, dict) and self._data == other

    def __repr__(self) -> str:
        return f"Record({self._data!r})"


def _matches(row: dict, eq: dict) -> bool:
    return all(row.get(k) == v for k, v in eq.items())


class Table:
    def __init__(self, state, name: str):
        self._state, self.name = state, name

    @property
    def _rows(self) -> dict[str, dict]:
        return self._state.tables[self.name]

    def get(self, id) -> Record | None:
        with self._state.lock:
            row = self._rows.get(str(id))
            return None if row is None else Record(row)

    def all(self) -> list[Record]:
        with self._state.lock:
            return [Record(r) for r in self._rows.values()]

    def where(self, **eq) -> list[Record]:
        with self._state.lock:
            return [Record(r) for r in self._rows.values() if _matches(r, eq)]

    def pick(self, **eq) -> Record | None:
        with self._state.lock:
            return next((Record(r) for r in self._rows.values() if _matches(r, eq)), None)

    def count(self, **eq) -> int:
        with self._state.lock:
            return sum(1 for r in self._rows.values() if _matches(r, eq))

    def insert(self, record: dict | None = None, **fields) -> Record:
        return Record(self._state.insert(self.name, {**(record or {}), **fields}))

    def update(self, id, **fields) -> Record:
        return Record(self._state.update_row(self.name, str(id), fields))

    def delete(self, id) -> bool:
        return self._state.delete_row(self.name, str(id))

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self):
        return iter(self.all())

    def __repr__(self) -> str:
        return f"<table {self.name}: {len(self)} records>"


@dataclass
class Diff:
    """What changed between two snapshots, by table: added and removed rows, changed fields (old, new)."""

    added: dict[str, dict[str, dict]] = field(default_factory=dict)
    removed: dict[str, dict[str, dict]] = field(default_factory=dict)
    changed: dict[str, dict[str, dict[str, tuple]]] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def __bool__(self) -> bool:
        return not self.is_empty()

    @classmethod
    def between(cls, old: dict, new: dict) -> Diff:
        d = cls()
        for table in sorted(set(old) | set(new)):
            o, n = old.get(table, {}), new.get(table, {})
            for rid in [r for r in n if r not in o]:
                d.added.setdefault(table, {})[rid] = n[rid]
            for rid in [r for r in o if r not in n]:
                d.removed.setdefault(table, {})[rid] = o[rid]
            for rid in [r for r in o if r in n and o[r] != n[r]]:
                keys = list(dict.fromkeys([*o[rid], *n[rid]]))
                d.changed.setdefault(table, {})[rid] = {k: (o[rid].get(k), n[rid].get(k)) for k in keys
                                                        if o[rid].get(k) != n[rid].get(k)}
        return d

    def summary(self) -> str:
        parts = [f"+{len(rows)} {t}" for t, rows in self.added.items()]
        parts += [f"-{len(rows)} {t}" for t, rows in self.removed.items()]
        parts += [f"~{len(rows)} {t}" for t, rows in self.changed.items()]
        return ", ".join(parts) or "no change"


class WorldView:
    """A live world: tables by record type name, snapshot/diff, revision, and its clock."""

    def __init__(self, state):
        object.__setattr__(self, "_state", state)

    @property
    def name(self) -> str:
        return self._state.world.name

    @property
    def clock(self):
        return self._state.clock

    @property
    def revision(self) -> int:
        return self._state.revision

    @property
    def tables(self) -> list[str]:
        return list(self._state.tables)

    def now(self):
        return self._state.clock.now()

    def table(self, name: str) -> Table:
        if name not in self._state.tables:
            raise KeyError(f"world {self.name} has no table {name!r} (tables: {', '.join(self._state.tables)})")
        return Table(self._state, name)

    def snapshot(self) -> dict:
        return self._state.snapshot()

    def diff(self, old: dict) -> Diff:
        return Diff.between(old, self.snapshot())

    def __getattr__(self, name: str) -> Table:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self.table(name)
        except KeyError as exc:
            raise AttributeError(str(exc)) from None

    def __repr__(self) -> str:
        return f"<world {self.name}: {', '.join(f'{t}={len(r)}' for t, r in self._state.tables.items())}>"
