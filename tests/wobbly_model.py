"""A seeded nondeterministic model of the tests' own, on OpenAI's Chat Completions wire (stdlib only).

The gate's sim answers one conversation the same way every time; a real model does not. This one
follows a script per input (reads, writes, a final answer) and varies what a real model varies: the
words of its answer (paraphrases), one more read now and then, independent reads in another order or
in one answer, and its latency (each user turn of a conversation is planned afresh; a history with a tool
call left unanswered is refused with OpenAI's 400) — drawn per conversation from $WOBBLE_SEED and a conversation counter,
so two baselines of one input differ while a run of the whole test is reproducible in kind.

A failed tool (a result that says Error, an error body, or nothing at all) is answered honestly, worded one of several
ways: an apology quoting what was read, a partial success naming what failed, a terse refusal.

$WOBBLE_RULES: JSON list of {"when": regex, "reads": [[tool, {args}]...], "writes": [[tool, {args}]...],
"answers": [template...], "extra_read": [tool, {args}]}; `{1}`... in args and answers are the match's
groups. POST */chat/completions; $PORT is the port; `python wobbly_model.py` serves until killed.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
import threading
import time
from contextlib import contextmanager
from http.server import ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from httpkit import JsonHandler, serve as httpkit_serve  # noqa: E402

FAILURES = ("Sorry, I couldn't finish that: {tool} failed ({error}). {reads}",
            "I looked the accounts up, but {tool} did not go through: {error}.",
            "Unable to complete the request right now. Please try again later.")
COUNTER = {"conversations": 0}
LOCK = threading.Lock()


def fill(value, groups):
    if isinstance(value, str):
        return re.sub(r"\{(\d)\}", lambda m: groups[int(m.group(1)) - 1], value)
    if isinstance(value, dict):
        return {k: fill(v, groups) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, groups) for v in value]
    return value


def plan_for(rule: dict, groups: tuple, rng: random.Random) -> dict:
    """One conversation's script: its turns of tool calls, then its answer's wording."""
    reads = [fill(r, groups) for r in rule.get("reads", [])]
    if rule.get("extra_read") and rng.random() < 0.5:
        reads.append(fill(rule["extra_read"], groups))
    rng.shuffle(reads)
    turns = [reads] if reads and rng.random() < 0.5 else [[r] for r in reads]  # together, or one per answer
    turns += [[fill(w, groups)] for w in rule.get("writes", [])]
    return {"turns": turns, "answer": fill(rng.choice(rule["answers"]), groups), "rng": rng.random()}


def conversation_of(messages: list) -> tuple[int | None, int]:
    """(the conversation number its tool call ids carry, how many of its steps are done), since the latest
    user message: each turn of a conversation is planned afresh."""
    ids = [c.get("id", "") for m in messages if m.get("role") == "assistant" for c in m.get("tool_calls") or []]
    numbers = [int(i.split("_")[1]) for i in ids if i.startswith("wob_")]
    turns = sum(1 for m in messages if m.get("role") == "assistant" and m.get("tool_calls"))
    return (numbers[-1] if numbers else None), turns


def unanswered(messages: list) -> list[str]:
    """Tool call ids a later message follows without their tool message: OpenAI refuses such a history."""
    out = []
    for i, m in enumerate(messages):
        if m.get("role") != "assistant" or not m.get("tool_calls"):
            continue
        j, answered = i + 1, set()
        while j < len(messages) and messages[j].get("role") == "tool":
            answered.add(messages[j].get("tool_call_id"))
            j += 1
        if j < len(messages) or answered:
            out += [c.get("id") for c in m["tool_calls"] if c.get("id") not in answered]
    return out


PLANS: dict[int, dict] = {}


def answer(doc: dict) -> dict:
    everything = doc.get("messages") or []
    latest = max((i for i, m in enumerate(everything) if m.get("role") == "user"), default=0)
    messages = everything[latest:]  # this turn: its user message and the steps since
    user = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
    number, done = conversation_of(messages)
    if number is None:
        with LOCK:
            COUNTER["conversations"] += 1
            number = COUNTER["conversations"]
        rng = random.Random(f"{os.environ.get('WOBBLE_SEED', '0')}:{number}")
        for rule in json.loads(os.environ.get("WOBBLE_RULES", "[]")):
            found = re.search(rule["when"], user, re.IGNORECASE)
            if found:
                PLANS[number] = plan_for(rule, found.groups(), rng)
                break
        else:
            PLANS[number] = {"turns": [], "answer": "I can only help with transfers.", "rng": rng.random()}
    plan = PLANS[number]
    time.sleep(random.Random(f"{number}:{done}:{plan['rng']}").uniform(0, 0.12))  # latency jitter
    failed = _failure(messages)
    if failed is not None:
        return _text(_honest(plan, failed, messages, number))
    if done < len(plan["turns"]):
        calls = [{"id": f"wob_{number}_{done}_{i}", "type": "function",
                  "function": {"name": tool, "arguments": json.dumps(args)}}
                 for i, (tool, args) in enumerate(plan["turns"][done])]
        return {"role": "assistant", "content": None, "tool_calls": calls}, "tool_calls"
    return _text(plan["answer"])


def _failure(messages: list) -> tuple[str, str] | None:
    """(the tool, its error) when the latest tool results hold a failure."""
    tail = []
    for m in reversed(messages):
        if m.get("role") != "tool":
            break
        tail.append(m)
    names = {c["id"]: c["function"]["name"] for m in messages if m.get("role") == "assistant"
             for c in m.get("tool_calls") or []}
    for m in tail:
        text = str(m.get("content") or "")
        if not text.strip():  # nothing came back: a careful model does not assume it worked
            return names.get(m.get("tool_call_id"), "a tool"), "it returned nothing"
        if re.search(r"\berror\b|\bfailed\b|timed out|did not answer", text, re.IGNORECASE):
            return names.get(m.get("tool_call_id"), "a tool"), text[:120]
    return None


def _honest(plan: dict, failed: tuple[str, str], messages: list, number: int) -> str:
    reads = " ".join(str(m.get("content"))[:80] for m in messages if m.get("role") == "tool")
    wording = random.Random(f"{number}:honest:{plan['rng']}").choice(FAILURES)
    return wording.format(tool=failed[0], error=failed[1], reads=f"Read so far: {reads}")


def _text(text: str):
    return {"role": "assistant", "content": text}, "stop"


class Model(JsonHandler):
    def do_POST(self):
        doc = self.json_body()
        if not self.path.endswith("/chat/completions"):
            return self.reply(404, {"error": {"message": "not found"}})
        dangling = unanswered(doc.get("messages") or [])
        if dangling:
            return self.reply(400, {"error": {
                "message": "An assistant message with 'tool_calls' must be followed by tool messages responding to "
                           f"each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                           f"{', '.join(dangling)}", "type": "invalid_request_error", "param": "messages",
                "code": None}})
        message, finish = answer(doc)
        self.reply(200, {"id": f"chatcmpl-wob{int(time.time() * 1000)}", "object": "chat.completion",
                         "created": int(time.time()), "model": doc.get("model", "gpt-4o-mini"),
                         "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
                         "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70}})


def serve() -> tuple[ThreadingHTTPServer, str]:
    """The model on a loopback port in this process: (server, base URL)."""
    return httpkit_serve(Model)


@contextmanager
def serving(rules: list):
    """The model with `rules` on a loopback port, for a test module: its base URL; $WOBBLE_RULES and
    $WOBBLE_SEED as they were once it stops (an xdist worker runs other modules after)."""
    saved = {k: os.environ.get(k) for k in ("WOBBLE_RULES", "WOBBLE_SEED")}
    server, url = serve()
    os.environ["WOBBLE_RULES"] = json.dumps(rules)
    try:
        yield url
    finally:
        server.shutdown()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("PORT", sys.argv[1] if len(sys.argv) > 1 else "0"))),
                        Model).serve_forever()
