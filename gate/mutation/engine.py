"""Turn one golden input into `count` seeded mutations.

Pure: (root seed, input id, index) decides the kind and the edit, so the same
seed gives the same mutated inputs in every process and at any concurrency.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from collections.abc import Callable, Mapping

from gate.mutation.mutators import DEFAULT_WEIGHTS, MUTATORS, RNG_FREE
from gate.mutation.text import GuardedText, Preserve

PRESERVE_NOTHING = Preserve()  # frozen: one shared default


@dataclass(frozen=True)
class Mutation:
    kind: str
    index: int
    text: str


def _weighted_order(rng: random.Random, weights: Mapping[str, float]) -> list[str]:
    """All kinds with weight > 0, in a seeded weighted order without replacement."""
    pool = {k: w for k, w in sorted(weights.items()) if w > 0}
    order = []
    while pool:
        kinds = list(pool)
        pick = rng.choices(kinds, weights=[pool[k] for k in kinds])[0]
        order.append(pick)
        del pool[pick]
    return order


def mutate(
    input_id: str,
    text: str,
    *,
    seed: int,
    count: int,
    weights: Mapping[str, float] | None = None,
    preserve: Preserve = PRESERVE_NOTHING,
    extra: Mapping[str, Callable] | None = None,
) -> list[Mutation]:
    """`count` mutations of `text`; a kind that cannot honour `preserve` yields to the next."""
    catalog = {**MUTATORS, **(extra or {})}
    weights = dict(DEFAULT_WEIGHTS if weights is None else weights)
    guarded = GuardedText(text, preserve)
    # One seeded weighted order per input, walked round-robin, so `count` mutations
    # cover many kinds (heavier kinds come earlier) instead of repeating the same one.
    order = _weighted_order(random.Random(f"{seed}:mutation:{input_id}"),
                            {k: w for k, w in weights.items() if k in catalog})
    out: list[Mutation] = []
    seen = {text}
    tried: set[str] = set()  # rng-free kinds already run: their one result is kept or refused already
    for index in range(count):
        rng = random.Random(f"{seed}:mutation:{input_id}:{index}")
        for step in range(len(order)):
            kind = order[(index + step) % len(order)]
            if kind in tried:
                continue
            if kind in RNG_FREE and kind not in (extra or {}):
                tried.add(kind)
            mutated = catalog[kind](guarded, rng)
            if mutated is not None and mutated not in seen:
                seen.add(mutated)
                out.append(Mutation(kind, index, mutated))
                break
    return out
