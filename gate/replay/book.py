"""Serve a session's recorded answers back, in order, and explain any request it lacks.

Requests are matched by target, method, path and a digest of the body that ignores
volatile fields (`digest` mode), or simply in order per target (`sequence` mode, for
imported sessions whose request bodies cannot match byte for byte).
"""

from __future__ import annotations

import difflib
import json

from gate.replay.session import RecordedExchange, Session


class ReplayBook:
    def __init__(self, session: Session):
        self.session = session
        self.used: set[int] = set()

    def take(self, info, digest: str) -> RecordedExchange | None:
        for n, ex in enumerate(self.session.exchanges):
            if n in self.used or ex.target != info.name:
                continue
            if self.session.match == "digest" and (ex.method != info.method or ex.path != info.path
                                                   or ex.digest != digest):
                continue
            self.used.add(n)
            return ex
        return None

    def explain_miss(self, info, request) -> str:
        """A readable diff against the closest recorded request of that target."""
        candidates = [ex for n, ex in enumerate(self.session.exchanges)
                      if ex.target == info.name and n not in self.used]
        if not candidates:
            return (f"the recording has no {'more ' if self.used else ''}requests to {info.name} "
                    f"(the agent now makes an extra call: {info.method} {info.path})")
        best = next((c for c in candidates if c.method == info.method and c.path == info.path), candidates[0])
        recorded, now = _pretty(best.request), _pretty(request)
        diff = list(difflib.unified_diff(recorded, now, "recorded", "now", lineterm="", n=1))
        head = f"closest recorded request: {best.method} {best.path}"
        return head + "\n" + "\n".join(diff[:40]) + ("\n…" if len(diff) > 40 else "")


def _pretty(doc) -> list[str]:
    if isinstance(doc, (dict, list)):
        return json.dumps(doc, indent=1, sort_keys=True).splitlines()
    return str(doc).splitlines()
