"""Where faults edit a Gemini answer: a whole GenerateContentResponse, or one stream chunk
(itself a partial GenerateContentResponse, so both share one set of edits).

Function-call args are a JSON *object* on this wire, so `tool_arg_slots` hands out an
`ArgsSlot`: it reads the args as JSON text, and a write that is still a JSON object
replaces them. A write that is not (what `bad_tool_args` does) is made into what the
Gemini API itself answers when the model's call does not parse: the candidate loses its
content and says `finishReason: MALFORMED_FUNCTION_CALL` with a `finishMessage`. A string
in `args` would be no better a test: google-genai's own validation would raise before the
agent saw anything, and the real API never sends one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from gate.dialects.base import Slot
from gate.dialects.model import Usage

REFUSED = [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}]


def framed(doc: dict) -> bytes:
    """One stream chunk as the API frames it: `data: <json>`, CRLF line ends, a blank line."""
    return b"data: " + json.dumps(doc, separators=(",", ":")).encode() + b"\r\n\r\n"


def candidates(doc: Any) -> list[dict]:
    found = doc.get("candidates") if isinstance(doc, dict) else None
    return [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []


def parts_of(candidate: dict) -> list[dict]:
    parts = (candidate.get("content") or {}).get("parts") if isinstance(candidate.get("content"), dict) else None
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


@dataclass
class ArgsSlot(Slot):
    """`functionCall.args`, read as JSON text; a write that is not a JSON object makes the
    candidate a malformed function call, as the API reports one (see the module docstring)."""

    candidate: dict = field(default_factory=dict)

    def get(self) -> str:
        value = self.holder.get(self.key)
        return value if isinstance(value, str) else json.dumps(value or {}, separators=(",", ":"))

    def set(self, value: Any) -> None:
        try:
            parsed = json.loads(value) if isinstance(value, str) else value
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            self.holder[self.key] = parsed
            return
        self.candidate.pop("content", None)
        self.candidate["finishReason"] = "MALFORMED_FUNCTION_CALL"
        self.candidate["finishMessage"] = f"Malformed function call: {self.holder.get('name')}({value})"


class GeminiEdits:
    """The fault-facing half of the Gemini dialect (mixed into `Gemini`)."""

    def classify(self, doc, event_name):
        """A chunk's role. Each function call arrives whole in one chunk, so that chunk is the
        call's `tool_args` (fragment faults then duplicate or reorder whole calls); the chunk
        with finishReason is `finish` even though it carries the (empty) last text part."""
        if not isinstance(doc, dict):
            return "other"
        if "error" in doc:
            return "error"
        found = candidates(doc)
        if any(c.get("finishReason") for c in found):
            return "finish"
        parts = [p for c in found for p in parts_of(c)]
        if any("functionCall" in p for p in parts):
            return "tool_args"
        if any(isinstance(p.get("text"), str) and p["text"] for p in parts):
            return "text"
        return "usage" if doc.get("usageMetadata") else "other"

    def text_slots(self, doc, streaming):
        return [Slot(p, "text") for c in candidates(doc) for p in parts_of(c)
                if isinstance(p.get("text"), str) and p["text"] and not p.get("thought")]

    def started_tool_names(self, doc):
        """Each call arrives whole: every functionCall of a chunk begins (and ends) one."""
        return [p["functionCall"].get("name") or "" for c in candidates(doc) for p in parts_of(c)
                if isinstance(p.get("functionCall"), dict)]

    def tool_arg_slots(self, doc, streaming):
        return [ArgsSlot(p["functionCall"], "args", candidate=c) for c in candidates(doc) for p in parts_of(c)
                if isinstance(p.get("functionCall"), dict)]

    def mark_cut(self, doc, streaming):
        changed = False
        for candidate in candidates(doc):
            if candidate.get("finishReason") not in (None, "MAX_TOKENS"):
                candidate["finishReason"], changed = "MAX_TOKENS", True
        return changed

    def hollow(self, doc, streaming):
        """`candidates: []`: the list google-genai's `.text` and `.function_calls` index into."""
        if candidates(doc):
            doc["candidates"] = []
            return True
        return False

    def drift(self, doc, streaming, mode):
        found = candidates(doc)
        if mode == "refusal":  # blocked for safety: no content at all, as the API answers it
            for candidate in found:
                candidate.pop("content", None)
                candidate.update(finishReason="SAFETY", safetyRatings=REFUSED)
            return bool(found)
        changed = False
        for part in (p for c in found for p in parts_of(c)):
            if mode == "rename" and "text" in part:
                part["content"] = part.pop("text")  # google-genai drops unknown fields: the text is gone
                changed = True
            elif mode == "rename" and "functionCall" in part:
                part["toolCall"] = part.pop("functionCall")
                changed = True
            elif mode == "format" and isinstance(part.get("text"), str) and part["text"]:
                part["text"] = json.dumps({"answer": part["text"]})
                changed = True
        return changed

    def usage(self, doc):
        raw = doc.get("usageMetadata") if isinstance(doc, dict) else None
        if not isinstance(raw, dict):
            return None
        output = int(raw.get("candidatesTokenCount") or 0) + int(raw.get("thoughtsTokenCount") or 0)
        return Usage(int(raw.get("promptTokenCount") or 0), output)

    def malformed_event(self):
        return b'data: {"candidates": [{"content": {"parts": [{"text": "\\u00\r\n\r\n'
