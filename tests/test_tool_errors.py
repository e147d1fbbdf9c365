"""V8's JSON.parse wordings are one family of tool errors to the sim (issue 34, item 4).

Which message an agent on Node sends back for damaged tool arguments depends on where the
damage lands; the sim must take every one for the call's own failure (and re-issue it), not
just the one it was first seen with. The messages are V8's own, made by the installed `node`
where there is one, beside the older V8's wordings (Node <= 18) the brief names.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from gate.dialects.model import ToolCall, ToolResult
from gate.dialects.tool_errors import bad_call, is_error

DAMAGED = ['{"order_id": "12"}34", "reason": ', '{"order_id": "1234", "reason": "', '{"order_id": "12" "34"}',
           '{order_id: 1}', '{"a": 1,}', '["a" "b"]', '{"a" 1}', '{"a": "\u0001"}', '{"a": "\\x"}', '{"a": 1e}',
           '{"a": -}', '{"a": 1.}', '"unterminated', "der_{\"orid\": 1}", '{"a": "\\u12"}', "[object Object]"]
OLDER_V8 = ["Unexpected token } in JSON at position 5", "Unexpected string in JSON at position 12",
            "Unexpected number in JSON at position 16", "Unexpected end of JSON input",
            "Bad control character in string literal in JSON at position 8"]


def _node_messages() -> list[str]:
    if shutil.which("node") is None:
        pytest.skip("node not installed")
    script = ("const out = []; for (const s of JSON.parse(process.argv[1])) { try { JSON.parse(s); "
              "out.push(null) } catch (e) { out.push(e.message) } } console.log(JSON.stringify(out))")
    out = subprocess.run(["node", "-e", script, json.dumps(DAMAGED)], capture_output=True, text=True, timeout=30)
    messages = json.loads(out.stdout)
    assert None not in messages, messages  # every sample is damaged
    return messages


def test_every_v8_json_parse_message_is_a_bad_call():
    messages = _node_messages() + OLDER_V8
    assert any("after JSON at position" in m for m in messages)  # the wording issue 34 saw missed
    call = ToolCall("call_1", "refund_order", '{"order_id": "1234"}')  # the arguments as sent back parse
    for message in messages:
        result = ToolResult("call_1", message)
        assert is_error(result, call) and bad_call(result, call), message


def test_a_result_that_merely_mentions_json_is_no_error():
    ok = ToolResult("call_1", '{"status": "refunded", "note": "sent as JSON"}')
    assert not is_error(ok) and not bad_call(ok)


# A framework that hands the model an exception's bare message (LlamaIndex, Agno: `str(e)`; Strands'
# error result) says "failed" only by what the message is: each in-process fault's own, and the
# ways real failures read. A result that merely starts with a number, or talks about time, is not one.
BARE_FAILURES = ["500: tool failed (injected by chaos-gate)", "the tool call timed out (injected by chaos-gate)",
                 "the tool's answer was cut off (injected by chaos-gate)", "503 Service Unavailable",
                 "Request timed out.", "Connection refused", "429: rate limited",
                 "Tool 'order_status' timed out after 3 seconds."]  # the Agents SDK: a function tool's timeout
NOT_FAILURES = ["404 Main Street is the delivery address", "1234 has been refunded", "Refund issued at 500 dollars",
                "timed exactly: the order shipped on time"]


@pytest.mark.parametrize("content", BARE_FAILURES)
def test_a_bare_failure_message_is_a_failure(content):
    assert is_error(ToolResult("call_1", content)) and not bad_call(ToolResult("call_1", content))


@pytest.mark.parametrize("content", NOT_FAILURES)
def test_an_answer_that_starts_with_a_number_or_mentions_time_is_none(content):
    assert not is_error(ToolResult("call_1", content))
