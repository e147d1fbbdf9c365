"""Did a tool call fail, and was it the call's arguments? Read off what the agent sent back.

The sim never follows a failed tool with a scripted success, so it must recognise a
failure however the agent's framework words it; few say "error" plainly. A result
failed when it is flagged (Anthropic `is_error`, a Gemini `functionResponse` with
`error`) or worded as a failure — each framework's words are listed below with their
source, measured on the frameworks themselves (tests/test_sim_fidelity.py).

The second question, *the call's fault or the tool's?*, picks what a model does next
(`on_error: auto`): it re-issues a call whose arguments did not parse or validate, and
apologises for a tool that failed. A failure is the call's when its words say so, or
when the call it answers carries arguments that are not a JSON object as the agent sent
them back (npm `openai` and the Agents SDK return the damaged text, pydantic-ai wraps it
as `{"INVALID_JSON": ...}`): the Agents SDK's one generic sentence then means "bad
arguments". Unparsable arguments alone do not make a result a failure: an agent whose
parser swallows them may really have run the tool, and what it did is for the
invariants to judge, not for the sim to guess.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: importing gate.dialects loads every dialect, and invariants import this
    from gate.dialects.model import ToolCall, ToolResult

HEAD = 300  # the wording is at the start of a result: a long tool answer is not searched whole

# V8's JSON.parse (Node, Deno, Chrome) as a family, not one message at a time: which one an agent
# sends back depends on where the damage lands (npm openai runTools returns fn.parse's message:
# `Expected ',' or '}' after property value in JSON at position 17` for one swap of two argument
# fragments, `Unexpected non-whitespace character after JSON at position 10` for another). Every
# positional wording, old V8 (`Unexpected token } in JSON at position 5`) and new, names a position
# in or after "JSON"; the rest end "is not valid JSON"; the leading words below still say it when a
# framework cuts the message short.
V8_JSON_PARSE = (
    r"\b(?:in|after) JSON at position \d+",
    r"\bis not valid JSON\b",  # `Unexpected token 'x', "{x" is not valid JSON`, `"[object Object]" is not ...`
    r"\bUnexpected end of JSON input\b",
    r"\bUnexpected non-whitespace character after JSON\b",
    r"\bUnexpected (?:token|number|string) in JSON\b",
    r"\bExpected (?:property name or '\}'|double-quoted property name|',' or '[\]}]'|':' after property name)",
    r"\bBad (?:control character in string literal|escaped character|Unicode escape)\b",
    r"\bUnterminated (?:string|fractional number) in JSON\b",
    r"\b(?:Exponent part is missing a number|No number after minus sign) in JSON\b",
)

# The call itself was wrong: arguments that do not parse or do not validate, or a tool name the
# framework does not know.
BAD_CALL_WORDS = (
    *V8_JSON_PARSE,
    r"\bJSON Parse error\b",  # JavaScriptCore (Bun)
    r"\bline \d+ column \d+ \(char \d+\)",  # Python's json.JSONDecodeError
    r"\bInvalid JSON\b", r"\bjson_invalid\b",  # pydantic (pydantic-ai's retry prompt), Agents SDK "Invalid JSON input"
    r"\b\d+ validation errors?\b", r"\bField required\b",  # pydantic ValidationError, pydantic-ai "N validation errors"
    r"\bInvalid arguments for function\b", r"\bInput must be a dictionary\b",  # Anthropic SDK tool runner
    r"\bError invoking tool '[^']*' with kwargs\b",  # LangGraph ToolNode, a ToolInvocationError
    r"\bis not a valid tool, try one of\b", r"^Invalid tool_call: ",  # LangGraph, npm openai: an unknown tool name
    r'"code"\s*:\s*"invalid_type"',  # zod (a `parse: schema.parse` in npm openai)
)

# Any failure, in the words frameworks and tool services use.
FAILED_WORDS = (
    r"^\s*error\b",  # LangGraph ToolNode "Error: ... Please fix your mistakes.", a service's "Error: 503"
    r"^\s*an error occurred\b",  # OpenAI Agents SDK default_tool_error_function
    r'^\s*\{\s*"error"\s*:',  # google-genai automatic function calling, pydantic-ai, JSON error bodies
    r'"status"\s*:\s*[45]\d\d\b',  # an HTTP error body relayed as the result
    r"^\s*tool failed\b", r"^\s*exception\b",
    r"^\s*\w+(Error|Exception)\(",  # a Python exception's repr (the Anthropic tool runner's error content)
    r"^\s*Failed to invoke function\b",  # google-genai automatic function calling
    r"^\s*Error executing tool\b",  # LangGraph ToolNode
    # a failure's bare message, which LlamaIndex, Agno and Strands hand the model as `str(e)`: a status-led
    # line ("500: tool failed", "503 Service Unavailable"), a timeout, a lost or refused connection
    r"^\s*[45]\d\d(?::|\s+(?:Bad Request|Unauthorized|Forbidden|Not Found|Too Many Requests|Internal Server Error|"
    r"Bad Gateway|Service Unavailable|Gateway Time-?out)\b)", r"^\s*(?:the )?(?:tool call |request |operation |read )?timed out\b",
    r"^\s*(?:the tool's answer was cut off|the tool's connection was reset|connection (?:reset|refused|aborted))\b",
    r"^\s*Tool '[^'\n]{1,128}' timed out after\b",  # OpenAI Agents SDK: a function tool's `timeout` (error_as_result)
)
WORDS = {"BAD_CALL": BAD_CALL_WORDS, "FAILED": FAILED_WORDS}


@functools.cache
def _compiled(name: str) -> re.Pattern:
    return re.compile("|".join(WORDS[name]), re.IGNORECASE)


def __getattr__(name: str) -> re.Pattern:
    """`BAD_CALL` and `FAILED`, compiled on first use: two large alternations cost `validate`, which
    imports this through the invariants, a few milliseconds it never needs."""
    if name in WORDS:
        return _compiled(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_error(result: ToolResult, call: ToolCall | None = None) -> bool:
    """The tool did not succeed: flagged, or worded as a failure."""
    head = result.content[:HEAD]
    return result.is_error or bool(_compiled("FAILED").search(head) or _compiled("BAD_CALL").search(head))


def bad_call(result: ToolResult, call: ToolCall | None = None) -> bool:
    """A failure that was the call's own (its arguments, its name): a model re-issues it."""
    return (call is not None and call.unparsable) or bool(_compiled("BAD_CALL").search(result.content[:HEAD]))
