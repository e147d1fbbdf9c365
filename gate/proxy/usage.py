"""Token usage of one LLM exchange, read from the upstream's answer through its dialect.

What a provider bills is what it generated, so the meter reads the upstream's answer
as the proxy pulls it (before any fault touches what the agent gets): a whole JSON
body, or every stream event, each handed to the request's dialect (`usage(doc)`).
Streams report usage cumulatively (Anthropic's message_start then message_delta,
Gemini's last chunk, Chat's include_usage chunk, Responses' response.completed), so
the largest value seen per field is the answer. When the answer says nothing, the
tokens are estimated the way the sim counts them (about four characters a token, of
the request's conversation and of the text and tool arguments read) and marked so.

Reading every document anyway, it also notes whether the model's answer carried a tool call
(`tool_calls`): exploration plans its tool-call faults on the answers that did, whether or not
the agent's tool run was traced after them (a framework callback may answer the call itself).
"""

from __future__ import annotations

import json

from gate.dialects import DIALECTS, Dialect, Usage
from gate.dialects.sse import BOUNDARY, data_of, name_of

MAX_BUFFER = 8 << 20  # a JSON answer larger than this is estimated, not parsed


class UsageMeter:
    def __init__(self, dialect: Dialect, path: str, request: bytes, status: int = 200):
        self.dialect, self.path, self.request, self.status = dialect, path, request, status
        self.sse: bool | None = None  # decided by the first chunk's content type
        self.buffer = b""
        self.overflow = False
        self.reported: Usage | None = None
        self.chars = 0  # text and tool arguments read, for the estimate
        self.tool_calls = False  # the answer carried a tool call (exploration plans tool-call faults on it)

    @classmethod
    def for_request(cls, info, body: bytes, status: int) -> UsageMeter | None:
        """A meter for a generating LLM call; None for tools, token counting, model lists."""
        if info.kind != "llm" or info.operation != "generate" or info.dialect is None:
            return None
        return cls(DIALECTS[info.dialect], info.path, body, status)  # routes.py already found it

    def feed(self, chunk: bytes, sse: bool) -> None:
        self.sse = sse if self.sse is None else self.sse
        if len(self.buffer) + len(chunk) > MAX_BUFFER and not self.sse:
            self.overflow = True
            return
        self.buffer += chunk
        if self.sse:
            self._drain_events()

    def _drain_events(self) -> None:
        while (m := BOUNDARY.search(self.buffer)) is not None:
            event, self.buffer = self.buffer[: m.end()], self.buffer[m.end():]
            self._read_doc(data_of(event), streaming=True, name=name_of(event))

    def _read_doc(self, doc, streaming: bool, name: str | None = None) -> None:
        if not isinstance(doc, dict):
            return
        try:
            found = self.dialect.usage(doc)
            slots = self.dialect.text_slots(doc, streaming) + self.dialect.tool_arg_slots(doc, streaming)
            self.tool_calls = self.tool_calls or self.dialect.carries_tool_calls(doc, streaming)
        except Exception:  # a damaged or unexpected document has no usage to give
            return
        if found is not None and found.total > 0:
            old = self.reported or Usage()
            self.reported = Usage(max(old.input_tokens, found.input_tokens), max(old.output_tokens, found.output_tokens))
        self.chars += sum(len(s.get()) for s in slots if not s.restates)

    def result(self) -> Usage:
        """The usage the answer reported, else an estimate marked `estimated`."""
        if self.sse and self.buffer.strip():
            self._read_doc(data_of(self.buffer), streaming=True)
            self.buffer = b""
        elif not self.sse and self.buffer and not self.overflow:
            try:
                self._read_doc(json.loads(self.buffer), streaming=False)
            except ValueError:
                pass
            self.buffer = b""
        if self.reported is not None:
            return self.reported
        if self.status >= 400:  # an error answer generated nothing to bill
            return Usage()
        return Usage(self._estimated_input(), max(0, self.chars // 4), estimated=True)

    def _estimated_input(self) -> int:
        try:
            return self.dialect.decode(self.path, json.loads(self.request)).approx_input_tokens()
        except Exception:  # not a request the dialect can read: bytes are all there is
            return max(1, len(self.request) // 4)


def run_usage(trace, pricing) -> dict:
    """Price each metered call of a run (its trace entry's `usage` becomes a dict with the cost)
    and return the run's sum, in the shape of the report's TokenUsage."""
    from gate.config.pricing import cost_usd, price_for

    total = {"calls": 0, "input_tokens": 0, "output_tokens": 0, "estimated": False, "cost_usd": 0.0, "unpriced": []}
    for entry in trace:
        if not isinstance(entry.usage, Usage):
            continue
        used, price = entry.usage, price_for(entry.model, pricing)
        cost = None if price is None else round(cost_usd(used.input_tokens, used.output_tokens, price), 8)
        entry.usage = {"calls": 1, "input_tokens": used.input_tokens, "output_tokens": used.output_tokens,
                       "estimated": used.estimated, "cost_usd": cost, "unpriced": [] if price or not pricing else [entry.model or "?"]}
        for key in ("calls", "input_tokens", "output_tokens"):
            total[key] += entry.usage[key]
        total["estimated"] |= used.estimated
        if price is None:
            total["unpriced"] = sorted(set(total["unpriced"]) | {entry.model or "?"})
        else:
            total["cost_usd"] += cost
    total["cost_usd"] = None if total["unpriced"] or not pricing else round(total["cost_usd"], 8)
    if not pricing:
        total["unpriced"] = []  # no price table at all: cost is simply not asked for
    return total
