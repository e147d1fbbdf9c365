"""The exploration plan as a file: discovered once, shared by every shard of a CI matrix. Pure.

`chaos-gate explore --discover plan.json` runs the baselines alone and writes what they planned;
`chaos-gate run --plan plan.json [--shard I/N]` explores from it without re-running the other
inputs' baselines: each point carries its reference (the baseline's answer, writes and calls), so
a shard needs nothing else to judge its share. The file names the config digest and seed it was
discovered under, and a run of another config or seed refuses it.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict

from gate.contracts.reference import Reference
from gate.errors import ConfigError
from gate.explore.planner import ExplorePlan, Point
from gate.explore.sites import Site, Unreached

FORMAT = 1


def dump_plan(plan: ExplorePlan, digest: str, seed: int) -> str:
    doc = {"format": FORMAT, "config_digest": digest, "seed": seed, "sites": plan.sites, "planned": plan.planned,
           "pruned": dict(plan.pruned), "unfaultable": [asdict(u) for u in plan.unfaultable],
           "failed_baselines": plan.failed_baselines, "points": [_point_doc(p) for p in plan.points]}
    return json.dumps(doc, indent=1, sort_keys=False) + "\n"


def load_plan(text: str, source: str, digest: str, seed: int) -> ExplorePlan:
    """The plan in `text`; ConfigError naming `source` when it is not one, or was discovered for another run."""
    try:
        doc = json.loads(text)
        if doc.get("format") != FORMAT:
            raise ValueError(f"format {doc.get('format')!r}, expected {FORMAT}")
        if doc["config_digest"] != digest or doc["seed"] != seed:
            raise ConfigError(f"{source}: the plan was discovered for another config or seed (digest "
                              f"{doc['config_digest'][:12]}, seed {doc['seed']}; this run: {digest[:12]}, seed {seed});"
                              " discover it again with `chaos-gate explore --discover`")
        return ExplorePlan(points=[_point(d) for d in doc["points"]], sites=doc["sites"], planned=doc["planned"],
                           pruned=Counter(doc["pruned"]), unfaultable=[Unreached(**u) for u in doc["unfaultable"]],
                           failed_baselines=list(doc["failed_baselines"]))
    except ConfigError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"{source}: not an exploration plan written by `chaos-gate explore --discover` ({exc})") \
            from None


def _point_doc(p: Point) -> dict:
    doc = asdict(p)
    doc["needs"] = list(p.needs) if p.needs else None
    return doc


def _point(d: dict) -> Point:
    ref = dict(d["reference"])
    ref["tools"] = tuple(ref.get("tools") or ())
    ref["answers"] = tuple(ref.get("answers") or ())
    ref["tool_orders"] = tuple(tuple(order) for order in ref.get("tool_orders") or ())
    ref["turn_model_calls"] = tuple(ref.get("turn_model_calls") or ())
    if ref.get("writes_always") is not None:
        ref["writes_always"] = tuple(ref["writes_always"])
    needs = d.get("needs")
    return Point(id=d["id"], input_id=d["input_id"], sites=tuple(Site(**s) for s in d["sites"]),
                 faults=tuple(d["faults"]), reference=Reference(**ref), persistent=d["persistent"],
                 sibling=d.get("sibling"), needs=(needs[0], needs[1]) if needs else None)
