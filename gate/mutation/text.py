"""A text with protected spans: the one place that knows what a mutator may not touch.

`preserve` promises that numbers, quoted spans and listed terms survive every
mutation. Rather than trusting each mutator to remember, mutators edit through
this class, which only exposes the unprotected characters and words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NUMBER = r"\d(?:[\d.,:/-]*\d)?"
QUOTED = r"\"[^\"\n]*\"|“[^”\n]*”|`[^`\n]*`|(?<![\w])'[^'\n]+'(?![\w])"
WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?", re.UNICODE)


@dataclass(frozen=True)
class Preserve:
    numbers: bool = True
    quoted: bool = True
    terms: tuple[str, ...] = ()


def protected_mask(text: str, preserve: Preserve) -> list[bool]:
    mask = [False] * len(text)
    patterns = []
    if preserve.numbers:
        patterns.append(re.compile(NUMBER))
    if preserve.quoted:
        patterns.append(re.compile(QUOTED))
    for term in preserve.terms:
        if term:
            patterns.append(re.compile(re.escape(term), re.IGNORECASE))
    for pattern in patterns:
        for m in pattern.finditer(text):
            for i in range(m.start(), m.end()):
                mask[i] = True
    return mask


def _predicate_key(predicate) -> tuple | None:
    """The same test on every call has the same key: a builtin, or a lambda's code when it
    captures nothing (mutators write theirs inline). None: a closure, never cached."""
    if getattr(predicate, "__closure__", None) is not None:
        return None
    return ("positions", getattr(predicate, "__code__", predicate))


class GuardedText:
    """Characters of a text plus which ones are off limits."""

    def __init__(self, text: str, preserve: Preserve):
        self.text = text
        self.mask = protected_mask(text, preserve)
        self._found: dict = {}  # one input gets hundreds of mutations: its free spots are found once

    @classmethod
    def from_parts(cls, text: str, mask: list[bool]) -> GuardedText:
        self = cls.__new__(cls)
        self.text, self.mask, self._found = text, mask, {}
        return self

    @property
    def has_protected(self) -> bool:
        return any(self.mask)

    def free_positions(self, predicate=lambda ch: True) -> list[int]:
        key = _predicate_key(predicate)
        found = self._found.get(key) if key is not None else None
        if found is None:
            found = [i for i, ch in enumerate(self.text) if not self.mask[i] and predicate(ch)]
            if key is not None:
                self._found[key] = found
        return list(found)  # a copy: mutators may shuffle what they get

    def free_words(self) -> list[tuple[int, int]]:
        """(start, end) of words that touch no protected character."""
        if "words" not in self._found:
            self._found["words"] = [(m.start(), m.end()) for m in WORD.finditer(self.text)
                                    if not any(self.mask[m.start():m.end()])]
        return list(self._found["words"])

    def map_free_chars(self, fn) -> str:
        """`fn` of each unprotected character, in order (a list, not a generator: join builds one anyway)."""
        return "".join([fn(ch) if not locked else ch for ch, locked in zip(self.text, self.mask, strict=False)])

    def protected_spans(self) -> list[str]:
        spans, current = [], []
        for ch, locked in zip(self.text, self.mask, strict=False):
            if locked:
                current.append(ch)
            elif current:
                spans.append("".join(current))
                current = []
        if current:
            spans.append("".join(current))
        return spans


def splice(text: str, edits: list[tuple[int, int, str]]) -> str:
    """Apply non-overlapping (start, end, replacement) edits."""
    out, last = [], 0
    for start, end, repl in sorted(edits):
        out.append(text[last:start])
        out.append(repl)
        last = end
    out.append(text[last:])
    return "".join(out)
