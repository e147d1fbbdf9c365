"""Google Gemini (`POST …/models/{model}:generateContent`, `:streamGenerateContent?alt=sse`,
`:countTokens`, `:embedContent`, `:batchEmbedContents`; `GET …/models`), as google-genai speaks it.

Facts measured with google-genai 3.6.1 (its source is the judge of every field here):
the model is only in the path, after any API version (`/v1/` by default, `/v1beta/`);
history is `contents[].parts[]` with `text`, `functionCall` {name, args, id?} and
`functionResponse` {name, response, id?}; function-call args are a JSON *object*; a
stream is `data: <json>` + a blank line per chunk, each chunk a partial
GenerateContentResponse, with no `event:` lines and no `[DONE]` (the stream just ends);
errors are `{"error": {code, message, status}}`, also as a chunk inside a stream. The
SDK sends declarations with `parameters` (Gemini's OpenAPI subset, upper-case types)
or `parameters_json_schema` (snake case as sent), so fields are read in both casings.
The edits for faults live in gemini_edits.py.
"""

from __future__ import annotations

import json
import re
from typing import Any

from gate.dialects.base import Dialect, Encoded
from gate.dialects.gemini_edits import REFUSED, GeminiEdits, framed
from gate.dialects.model import Conversation, Message, ToolCall, ToolResult, ToolSpec, Turn, Usage
from gate.dialects.openai_chat import pieces

ROUTE = re.compile(r"/(?:models|tunedModels)/([^/:]+):([A-Za-z]+)$")
METHODS = {"generateContent": "generate", "streamGenerateContent": "generate", "countTokens": "count_tokens",
           "embedContent": "embeddings", "batchEmbedContents": "embeddings"}
STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
          409: "ABORTED", 429: "RESOURCE_EXHAUSTED", 499: "CANCELLED", 500: "INTERNAL", 501: "UNIMPLEMENTED",
          502: "UNAVAILABLE", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED", 529: "UNAVAILABLE"}
FINISH = {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS", "refusal": "SAFETY",
          "content_filter": "SAFETY"}


def field(doc: Any, camel: str) -> Any:
    """A field in proto-JSON camelCase or its snake_case spelling (the API accepts both)."""
    if not isinstance(doc, dict):
        return None
    if camel in doc:
        return doc[camel]
    return doc.get(re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), camel))


def parts_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = field(content, "parts") or []
    return "".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
                   and not p.get("thought"))


def json_schema(schema: Any) -> Any:
    """Gemini's Schema (OpenAPI subset: `type: "OBJECT"`) as the JSON Schema the sim reads."""
    if isinstance(schema, list):
        return [json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    return {k: (v.lower() if k == "type" and isinstance(v, str) else json_schema(v)) for k, v in schema.items()
            if k not in ("propertyOrdering", "property_ordering")}


def _result(raw: dict, names: dict[str, str]) -> ToolResult:
    """A functionResponse: `{"error": …}` means the tool failed (google-genai's automatic
    function calling writes `{"result": …}` or `{"error": …}`; the docs use `output`)."""
    response = field(raw, "response")
    response = response if isinstance(response, dict) else {"result": response}
    failed = response.get("error") is not None
    value = response["error"] if failed else next(
        (response[k] for k in ("result", "output") if k in response and len(response) == 1), response)
    content = value if isinstance(value, str) else json.dumps(value)
    name = raw.get("name") or None
    return ToolResult(raw.get("id") or names.get(name or "", ""), content, name=name, is_error=failed)


def _messages(raw: dict, index: int, names: dict[str, str]) -> list[Message]:
    """One content: `model` speaks (text, function calls); anything else is the user's side
    (text, function responses — google-genai sends these with role `user`)."""
    parts = [p for p in field(raw, "parts") or [] if isinstance(p, dict)]
    if raw.get("role") == "model":
        calls = []
        for n, part in enumerate(parts):
            call = field(part, "functionCall")
            if isinstance(call, dict):
                ident = call.get("id") or f"call_{index}_{n}"  # the SDK may omit ids: pair by name
                names[call.get("name") or ""] = ident
                calls.append(ToolCall(ident, call.get("name") or "", json.dumps(call.get("args") or {})))
        return [Message("assistant", parts_text(raw), tool_calls=calls)]
    results = [_result(r, names) for r in (field(p, "functionResponse") for p in parts) if isinstance(r, dict)]
    text = parts_text(raw)
    out = [Message("tool", tool_results=results)] if results else []
    return out + [Message("user", text)] if text or not results else out


def _tools(doc: dict) -> list[ToolSpec]:
    specs = []
    for tool in field(doc, "tools") or []:
        for decl in field(tool, "functionDeclarations") or []:
            if isinstance(decl, dict) and decl.get("name"):
                params = field(decl, "parametersJsonSchema") or json_schema(decl.get("parameters")) or {}
                specs.append(ToolSpec(decl["name"], decl.get("description") or "", params))
    return specs


def _tool_choice(doc: dict, tools: list[ToolSpec]) -> tuple[str, list[ToolSpec]]:
    """`mode` ANY / NONE / AUTO; under ANY, `allowedFunctionNames` limits what may be called."""
    config = field(field(doc, "toolConfig"), "functionCallingConfig") or {}
    mode = str(config.get("mode") or "AUTO").upper()
    if mode == "NONE":
        return "none", tools
    if mode != "ANY":
        return "auto", tools
    allowed = field(config, "allowedFunctionNames") or []
    tools = [t for t in tools if t.name in allowed] if allowed else tools
    return (tools[0].name if allowed and len(tools) == 1 else "required"), tools


def _format(doc: dict) -> tuple[dict | None, bool]:
    """Structured output: (schema, json_mode) from generationConfig."""
    config = field(doc, "generationConfig") or {}
    if field(config, "responseMimeType") != "application/json":
        return None, False
    schema = field(config, "responseJsonSchema") or json_schema(field(config, "responseSchema"))
    return (schema, False) if schema else (None, True)


def _finish(turn: Turn) -> str:
    """The finishReason; SAFETY (a refusal) is an answer the API blocked, sent with no content."""
    return "SAFETY" if turn.refusal else FINISH[turn.finish]


class Gemini(GeminiEdits, Dialect):
    name = "gemini"
    provider = "gemini"

    # -- routing ------------------------------------------------------------------
    def operation(self, method, path):
        bare = path.split("?")[0].rstrip("/")
        if method == "GET":
            return "models" if bare.endswith("/models") else None
        found = ROUTE.search(bare)
        return METHODS.get(found.group(2)) if method == "POST" and found else None

    def model_in_path(self, path):
        found = ROUTE.search(path.split("?")[0])
        return found.group(1) if found else None

    def wants_stream(self, path, doc):
        return ":streamGenerateContent" in path.split("?")[0]

    # -- requests -------------------------------------------------------------------
    def decode(self, path, doc):
        request = field(doc, "generateContentRequest") or doc  # countTokens may wrap a whole request
        names: dict[str, str] = {}
        messages = [m for i, raw in enumerate(field(request, "contents") or []) if isinstance(raw, dict)
                    for m in _messages(raw, i, names)]
        choice, tools = _tool_choice(request, _tools(request))
        schema, json_mode = _format(request)
        candidates = field(field(request, "generationConfig"), "candidateCount")
        return Conversation(messages=messages, system=parts_text(field(request, "systemInstruction")),
                            model=self.model_in_path(path), tools=tools, tool_choice=choice,
                            response_schema=schema, json_mode=json_mode, stream=self.wants_stream(path, doc),
                            n=int(candidates or 1))

    # -- answers --------------------------------------------------------------------
    @staticmethod
    def _parts(turn: Turn) -> list[dict]:
        parts = [{"text": turn.text}] if turn.text else []
        for call in turn.tool_calls:
            args = call.parsed()
            parts.append({"functionCall": {"id": call.id, "name": call.name,
                                           "args": args if isinstance(args, dict) else call.arguments}})
        return parts or [{"text": ""}]

    @staticmethod
    def _usage(usage: Usage) -> dict:
        return {"promptTokenCount": usage.input_tokens, "candidatesTokenCount": usage.output_tokens,
                "totalTokenCount": usage.total}

    def _response(self, conv: Conversation, ident: str, candidates: list[dict], usage: Usage | None) -> dict:
        doc: dict = {"candidates": candidates}
        if usage is not None:
            doc["usageMetadata"] = self._usage(usage)
        return dict(doc, modelVersion=conv.model or "sim", responseId=ident)

    @staticmethod
    def _candidate(parts: list[dict] | None, index: int, finish: str | None = None) -> dict:
        out: dict = {"content": {"parts": parts, "role": "model"}} if parts is not None else {}
        if finish:
            out["finishReason"] = finish
            if finish == "SAFETY":
                out["safetyRatings"] = REFUSED
        return dict(out, index=index)

    def encode(self, turn, conv, ident, chunk_chars=8):
        if conv.stream:
            return Encoded("text/event-stream", self._stream(turn, conv, ident, chunk_chars))
        finish = _finish(turn)
        candidates = [self._candidate(None if finish == "SAFETY" else self._parts(turn), i, finish)
                      for i in range(max(1, conv.n))]
        return Encoded("application/json", [json.dumps(self._response(conv, ident, candidates, turn.usage)).encode()])

    def _stream(self, turn: Turn, conv: Conversation, ident: str, size: int) -> list[bytes]:
        """Text split over chunks, each function call whole in one chunk (the Gemini API does
        not stream argument fragments), then a last chunk with finishReason and usageMetadata
        carrying an empty text part, as the API's last chunk does."""
        def chunk(parts: list[dict] | None, finish: str | None = None, usage: Usage | None = None) -> bytes:
            candidates = [self._candidate(parts, i, finish) for i in range(max(1, conv.n))]
            return framed(self._response(conv, ident, candidates, usage))
        finish = _finish(turn)
        if finish == "SAFETY":
            return [chunk(None, finish, turn.usage)]
        out = [chunk([{"text": p}]) for p in pieces(turn.text, size) if p]
        out += [chunk([part]) for part in self._parts(turn) if "functionCall" in part]
        return out + [chunk([{"text": ""}], finish, turn.usage)]

    def decode_turn(self, doc):
        candidates = doc.get("candidates")
        if not isinstance(candidates, list) or not candidates or not isinstance(candidates[0], dict):
            return None
        content = candidates[0].get("content") or {}
        names: dict[str, str] = {}
        said = _messages({"role": "model", "parts": content.get("parts") or []}, 0, names)[0]
        finish = {"MAX_TOKENS": "length", "SAFETY": "content_filter"}.get(candidates[0].get("finishReason"), "stop")
        finish = "tool_calls" if said.tool_calls and finish == "stop" else finish
        return Turn(text=said.text, tool_calls=said.tool_calls, finish=finish, usage=self.usage(doc) or Usage())

    def error(self, status, message):
        kind = STATUS.get(status) or ("INTERNAL" if status >= 500 else "FAILED_PRECONDITION")
        return {"error": {"code": status, "message": message, "status": kind}}

    def stream_error(self, message):
        return framed(self.error(500, message))  # google-genai raises on a chunk that starts {"error":

    def list_models(self, names):
        methods = ["generateContent", "streamGenerateContent", "countTokens", "embedContent", "batchEmbedContents"]
        return {"models": [{"name": f"models/{n}", "version": "001", "displayName": n,
                            "description": "chaos-gate scripted model", "inputTokenLimit": 1048576,
                            "outputTokenLimit": 65536, "supportedGenerationMethods": methods} for n in names]}

    def count_tokens(self, conv):
        return {"totalTokens": conv.approx_input_tokens()}

    def embedding_inputs(self, doc):
        requests = field(doc, "requests")
        if isinstance(requests, list):
            return [parts_text(field(r, "content")) for r in requests if isinstance(r, dict)]
        return [parts_text(field(doc, "content"))]

    def embeddings(self, doc, path, vectors):
        if isinstance(field(doc, "requests"), list):  # batchEmbedContents (what google-genai calls)
            return {"embeddings": [{"values": v} for v in vectors]}
        return {"embedding": {"values": vectors[0] if vectors else []}}
