"""Mutation catalog: enough kinds, seeded determinism, and `preserve` really preserved."""

import re

import pytest

from gate.mutation import MUTATORS, Preserve, mutate
from gate.mutation.text import GuardedText
from gate.plan import rng_for

TEXT = 'Please refund order 1234 for "Blue Widget" today, my account is ACME-77 and I paid 19.99 dollars.'
TERMS = ("ACME",)


def test_at_least_fourteen_offline_kinds():
    assert len(MUTATORS) >= 14
    assert {"typo", "homoglyph", "zero_width", "injection_suffix", "roleplay", "base64", "code_switch"} <= set(MUTATORS)


@pytest.mark.parametrize("kind", sorted(MUTATORS))
def test_every_kind_changes_the_text_and_keeps_protected_spans(kind):
    preserve = Preserve(terms=TERMS)
    guarded = GuardedText(TEXT, preserve)
    protected = guarded.protected_spans()
    assert {"1234", '"Blue Widget"', "ACME", "77", "19.99"} <= set(protected)
    changed = 0
    for n in range(25):
        out = MUTATORS[kind](guarded, rng_for("test", kind, n))
        if out is None:
            assert kind == "base64"  # it refuses rather than hide protected spans
            continue
        changed += out != TEXT
        for span in protected:
            assert span in out, f"{kind} altered protected span {span!r}: {out!r}"
    assert kind == "base64" or changed >= 20


def test_base64_encodes_when_nothing_is_protected():
    import base64

    out = MUTATORS["base64"](GuardedText("reset my password", Preserve()), rng_for("x"))
    assert base64.b64encode(b"reset my password").decode() in out


def test_same_seed_same_mutations_other_seed_differs():
    a = mutate("in", TEXT, seed=11, count=10)
    b = mutate("in", TEXT, seed=11, count=10)
    c = mutate("in", TEXT, seed=12, count=10)
    assert a == b
    assert [m.text for m in a] != [m.text for m in c]
    assert len({m.text for m in a}) == 10  # no duplicates
    assert len({m.kind for m in a}) >= 7  # spread over kinds, not one kind repeated


def test_weights_select_kinds_and_zero_disables():
    only = mutate("in", TEXT, seed=1, count=5, weights={"upper": 1.0, "typo": 0.0, "lower": 1.0})
    assert {m.kind for m in only} <= {"upper", "lower"}
    assert all(m.kind != "typo" for m in only)


def test_preserve_can_be_turned_off():
    outs = mutate("in", "order 1234", seed=3, count=20, weights={"leetspeak": 1}, preserve=Preserve(numbers=False))
    assert outs  # leetspeak on digits is a no-op but letters change
    g = GuardedText("order 1234", Preserve(numbers=False))
    assert not g.has_protected


def test_homoglyphs_and_zero_width_are_invisible_changes():
    g = GuardedText("please cancel my order", Preserve())
    h = MUTATORS["homoglyph"](g, rng_for("h"))
    z = MUTATORS["zero_width"](g, rng_for("z"))
    assert h != g.text and re.search("[\u0400-\u04ff]", h)
    assert z.replace("\u200b", "").replace("\u200c", "").replace("\u200d", "").replace("\u2060", "") == g.text
