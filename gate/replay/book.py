"""Serve a session's recorded answers back, in order, and explain any request it lacks.

Requests are matched by target, method, path and a digest of the body that ignores
volatile fields (`digest` mode), or simply in order per target (`sequence` mode, for
imported sessions whose request bodies cannot match byte for byte). In sequence mode
a recorded LLM call answers the next LLM request whatever upstream it goes to (a trace
does not know the config's upstream names), and a recorded tool call answers the
upstream of the same name, or the one `tool_map` maps its traced name to.

A replay passes only when it was followed: what the agent never asked for is kept
(`unused`) for `replay-matches`. Under chaos, a request identical to one whose answer
a fault just damaged is a retry and gets the same recorded answer again.
"""

from __future__ import annotations

import difflib
import json

from gate.replay.session import RecordedExchange, Session


class ReplayBook:
    def __init__(self, session: Session, tool_map: dict[str, str] | None = None):
        self.session = session
        self.tool_map = tool_map or {}
        self.used: set[int] = set()
        self.faulted: dict[tuple, int] = {}  # (target, method, path, digest) -> exchange a fault damaged
        self.last: tuple = (None, None)  # the request taken last, and its exchange

    def _target(self, ex: RecordedExchange) -> str:
        return self.tool_map.get(ex.target, ex.target) if ex.kind == "tool" else ex.target

    def _fits(self, ex: RecordedExchange, info, digest: str) -> bool:
        if self.session.match == "digest":
            return (ex.target, ex.method, ex.path, ex.digest) == (info.name, info.method, info.path, digest)
        if ex.kind == "llm":
            return info.kind == "llm" and info.operation in (None, "generate")
        return info.kind == "tool" and self._target(ex) in (info.name, info.tool)

    def take(self, info, digest: str) -> RecordedExchange | None:
        for n, ex in enumerate(self.session.exchanges):
            if n not in self.used and self._fits(ex, info, digest):
                self.used.add(n)
                self.last = (info.name, info.method, info.path, digest), n
                return ex
        return None

    def retry(self, info, digest: str) -> RecordedExchange | None:
        """The recorded answer again, for a request repeated after a fault damaged its answer."""
        n = self.faulted.get((info.name, info.method, info.path, digest))
        return None if n is None else self.session.exchanges[n]

    def mark_faulted(self, info, digest: str) -> None:
        """A fault damages the answer to the request taken last: its identical repeat is a retry."""
        key, n = self.last
        if key == (info.name, info.method, info.path, digest):
            self.faulted[key] = n

    def unused(self) -> list[RecordedExchange]:
        return [ex for n, ex in enumerate(self.session.exchanges) if n not in self.used]

    def summary(self) -> dict:
        """What replay-matches needs after the run: how far the agent followed the recording."""
        left = self.unused()
        return {"recorded": len(self.session.exchanges), "used": len(self.used),
                "unused": [_label(ex) for ex in left[:5]]}

    def explain_miss(self, info, request) -> str:
        """A readable diff against the closest recorded request of that target."""
        candidates = [ex for n, ex in enumerate(self.session.exchanges) if n not in self.used
                      and (ex.target == info.name or self.session.match == "sequence" and ex.kind == info.kind)]
        if not candidates:
            return (f"the recording has no {'more ' if self.used else ''}requests to {info.name} "
                    f"(the agent now makes an extra call: {info.method} {info.path})")
        if self.session.match == "sequence":
            return _sequence_miss(candidates[0], info)
        best = next((c for c in candidates if c.method == info.method and c.path == info.path), candidates[0])
        recorded, now = _pretty(best.request), _pretty(request)
        diff = list(difflib.unified_diff(recorded, now, "recorded", "now", lineterm="", n=1))
        head = f"closest recorded request: {best.method} {best.path}"
        return head + "\n" + "\n".join(diff[:40]) + ("\n…" if len(diff) > 40 else "")


def _sequence_miss(next_ex: RecordedExchange, info) -> str:
    """An imported trace has no request bodies to diff: name both sides, and how to map them."""
    traced = next_ex.name or next_ex.target
    if next_ex.kind == "tool":
        return (f"the recording's next tool call is {traced!r}, the agent called {info.tool or info.name!r}; "
                f"if they are the same tool, map it: replay: {{tool_map: {{{traced}: {info.name}}}}}")
    return f"the recording's next call is {_label(next_ex)}"


def _label(ex: RecordedExchange) -> str:
    name = ex.name or ex.target
    return f"{ex.kind} {name}" + (f" (run {ex.run_id})" if ex.run_id else f" {ex.method} {ex.path}".rstrip())


def _pretty(doc) -> list[str]:
    if isinstance(doc, (dict, list)):
        return json.dumps(doc, indent=1, sort_keys=True).splitlines()
    return str(doc).splitlines()
