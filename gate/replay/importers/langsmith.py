"""Import LangSmith runs, in every shape the SDK and the UI export them, as sessions.

Accepted: the flat list of `Client.list_runs` (a trace, a project, any run_type
filter), a nested run from `read_run(load_child_runs=True)` (`child_runs`), a list of
those, JSONL, `{"runs": [...]}`, and rows keyed or labelled by `run_id`. Runs are
indexed once by id and grouped by trace (`trace_id`, else the root reached through
`parent_run_id`), so the import is linear in the number of runs.

In a trace, the wire calls are the LLM and tool runs that wrap no other LLM or tool
run (a `@traceable(run_type="llm")` around a wrapped client is not a second call).
They are replayed in order (`dotted_order`, else start time). A run with `error` is
imported as the failure the agent saw (see failures.py). `wrap_openai` records a streamed
chat completion (`stream=True`) reduced to one `message` per choice but keeps the chunk's
`object: chat.completion.chunk`, and its usage as `usage_metadata`: read as the completion
it adds up to.

A thread (root runs sharing a `session_id`, `thread_id` or `conversation_id` in their metadata, as
LangSmith's Threads view groups them; the run's top-level `session_id` is its project, not a thread)
imports as one conversation session, its traces as turns in start-time order (importers/__init__.py).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any
from collections.abc import Iterator

from gate.errors import ConfigError
from gate.heap import frozen_heap
from gate.replay.importers import ImportResult, Skip, conversation_of, failed, llm_answer, session_of, tool_answer
from gate.replay.importers.failures import classify
from gate.replay.importers.messages import input_text, llm_turn, output_text, unwrap, text_of

CALLS = ("llm", "tool")
THREAD_KEYS = ("session_id", "thread_id", "conversation_id")  # the metadata keys LangSmith groups a thread by


def read_documents(path: Path) -> tuple[list[Any], list[tuple[str, str]]]:
    """The JSON document(s) of a file: one document, or one per JSONL line (bad lines reported)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        return [json.loads(text)], []
    except ValueError:
        pass
    docs, bad = [], []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                docs.append(json.loads(line))
            except ValueError as exc:
                bad.append((f"line {n}", f"not JSON: {exc}"))
    if not docs:
        raise ConfigError(f"{path}: neither JSON nor JSONL: {bad[0][1] if bad else 'empty file'}")
    return docs, bad


def _is_run(doc: Any) -> bool:
    return isinstance(doc, dict) and ("run_type" in doc or "child_runs" in doc) and ("id" in doc or "run_id" in doc)


def flatten(doc: Any, parent: str | None = None) -> Iterator[dict]:
    """Every run in a document of any export shape, nested child runs lifted out with their parent."""
    stack = [(doc, parent)]
    while stack:
        item, above = stack.pop()
        if isinstance(item, list):
            stack.extend((x, above) for x in reversed(item))
        elif _is_run(item):
            run = dict(item, id=str(item.get("id") or item.get("run_id")))
            if above and not run.get("parent_run_id"):
                run["parent_run_id"] = above
            children = run.pop("child_runs", None) or []
            yield run
            stack.extend((c, run["id"]) for c in reversed(children))
        elif isinstance(item, dict) and isinstance(item.get("runs"), list):
            stack.append((item["runs"], above))
        elif isinstance(item, dict) and item and all(_is_run(v) or (isinstance(v, dict) and "run_type" in v)
                                                     for v in item.values()):
            stack.extend(({"id": k, **v} if "id" not in v else v, above) for k, v in reversed(item.items()))
        else:
            raise ValueError(f"expected runs (a list, {{\"runs\": [...]}}, a run with child_runs or rows keyed "
                             f"by run id), found {_describe(item)}")


def _describe(item: Any) -> str:
    if isinstance(item, dict):
        return "an object with keys " + ", ".join(sorted(map(str, item))[:8])
    return type(item).__name__


class Index:
    """Runs by id, children by parent, trace of each run: built once, O(runs)."""

    def __init__(self, runs: list[dict]):
        self.by_id: dict[str, dict] = {}
        self.order: dict[str, int] = {}
        for n, run in enumerate(runs):
            if run["id"] not in self.by_id:  # the same run in two shapes: keep the first
                self.by_id[run["id"]] = run
                self.order[run["id"]] = n
        self._trace: dict[str, str] = {}

    def parent(self, run: dict) -> dict | None:
        pid = run.get("parent_run_id")
        return self.by_id.get(str(pid)) if pid else None

    def trace_of(self, run: dict) -> str:
        if run.get("trace_id"):
            return str(run["trace_id"])
        chain, node = [], run
        while node is not None and node["id"] not in self._trace:
            chain.append(node["id"])
            up = self.parent(node)
            if up is None:
                self._trace[node["id"]] = node["id"]
                break
            node = up
        root = self._trace[node["id"]] if node is not None else chain[-1]
        for rid in chain:
            self._trace[rid] = root
        return root

    def wrappers(self) -> set[str]:
        """Ids of runs above an LLM or tool run: not wire calls themselves."""
        marked: set[str] = set()
        for run in self.by_id.values():
            if run.get("run_type") in CALLS:
                up = self.parent(run)
                while up is not None and up["id"] not in marked:
                    marked.add(up["id"])
                    up = self.parent(up)
        return marked

    def traces(self) -> dict[str, list[dict]]:
        groups: dict[str, list[dict]] = {}
        for run in self.by_id.values():
            groups.setdefault(self.trace_of(run), []).append(run)
        return groups

    def sort_key(self, run: dict):
        return (str(run.get("dotted_order") or ""), str(run.get("start_time") or ""), self.order[run["id"]])


def _ms(run: dict) -> float | None:
    try:
        start, end = (datetime.fromisoformat(str(run[k]).replace("Z", "+00:00")) for k in ("start_time", "end_time"))
        return round((end - start).total_seconds() * 1000, 1)
    except (KeyError, ValueError, TypeError):
        return None


def tool_output(outputs: Any) -> tuple[Any, bool]:
    """What the tool returned (a ToolMessage's content, a dict, a string), and whether it was an error."""
    value = outputs.get("output", outputs) if isinstance(outputs, dict) and len(outputs) == 1 else outputs
    msg = unwrap(value)
    if isinstance(msg, dict) and msg.get("type") in ("ToolMessage", "tool") and "content" in msg:
        content = msg["content"]
        text = content if isinstance(content, str) else (text_of(content) or json.dumps(content))
        return text, msg.get("status") == "error"
    return value, False


def reduced_stream(outputs: Any) -> Any:
    """A streamed chat completion as `wrap_openai` records it, as the completion it adds up to:
    `object: chat.completion.chunk` with a whole `message` in each choice (not a `delta`), usage
    under `usage_metadata` (input/output tokens). Anything else is returned as it is."""
    if not isinstance(outputs, dict) or outputs.get("object") != "chat.completion.chunk":
        return outputs
    choices = outputs.get("choices")
    if not isinstance(choices, list) or not all(isinstance(c, dict) and isinstance(c.get("message"), dict)
                                                for c in choices):
        return outputs
    doc = dict(outputs, object="chat.completion")
    meta = outputs.get("usage_metadata")
    if not isinstance(doc.get("usage"), dict) and isinstance(meta, dict):
        prompt, completion = int(meta.get("input_tokens") or 0), int(meta.get("output_tokens") or 0)
        doc["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    return doc


def exchange(run: dict, llm_target: str, tool_map: dict[str, str]):
    name, rid = run.get("name"), run["id"]
    target = llm_target if run["run_type"] == "llm" else tool_map.get(name or "", name or "tool")
    if run.get("error"):
        return failed(classify(run["error"]), run["run_type"], rid, name, target, _ms(run))
    outputs = run.get("outputs")
    if run["run_type"] == "tool":
        if outputs is None:
            raise Skip(f"tool run {rid} ({name}) has no outputs and no error (still running?)")
        value, is_error = tool_output(outputs)
        return tool_answer(value, rid, name, target, is_error)
    turn = llm_turn(reduced_stream(outputs))
    if turn is None:
        keys = ", ".join(sorted(outputs)[:6]) if isinstance(outputs, dict) else type(outputs).__name__
        raise Skip(f"LLM run {rid} ({name}) has outputs in no known format (found {keys or 'nothing'}; "
                   "expected generations, choices, an Anthropic message or messages)")
    return llm_answer(turn, rid, name, target)


def build_session(trace_id: str, runs: list[dict], index: Index, wrappers: set[str], llm_target: str,
                  tool_map: dict[str, str]):
    runs.sort(key=index.sort_key)
    calls = [r for r in runs if r.get("run_type") in CALLS and r["id"] not in wrappers]
    if not calls:
        raise Skip("has no LLM or tool runs")
    roots = [r for r in runs if index.parent(r) is None]
    root = next((r for r in roots if str(r["id"]) == trace_id), roots[0] if roots else calls[0])
    text = input_text(root.get("inputs"))
    if text is None:
        first_llm = next((r for r in calls if r["run_type"] == "llm"), None)
        text = input_text(first_llm.get("inputs")) if first_llm else None
    if text is None:
        raise Skip(f"root run {root['id']} ({root.get('name')}) has no user input (a string input or messages)")
    exchanges = [exchange(r, llm_target, tool_map) for r in calls]
    return session_of("langsmith", trace_id, root.get("name"), text, final_answer(root, calls), exchanges)


def final_answer(root: dict, calls: list[dict]) -> str | None:
    """The trace's answer: its root's output; where the root is itself a call (an export filtered
    to LLM runs has no chain root, and each LLM run is a root), the last LLM run's text: the
    first one may have spoken before calling a tool, or only called it."""
    if root.get("run_type") not in CALLS:
        return output_text(root.get("outputs"))
    answered = [r for r in calls if r["run_type"] == "llm" and not r.get("error")]
    if not answered:
        return None
    turn = llm_turn(reduced_stream(answered[-1].get("outputs")))
    return turn.text if turn is not None and turn.text else None


def thread_key(run: dict) -> str | None:
    """The thread a run belongs to, from its metadata (`extra.metadata`, as the SDK exports it, or
    `metadata`); None outside a thread. Never the run's own `session_id` field: that is its project."""
    for holder in ((run.get("extra") or {}).get("metadata") if isinstance(run.get("extra"), dict) else None,
                   run.get("metadata")):
        if isinstance(holder, dict):
            for key in THREAD_KEYS:
                value = holder.get(key)
                if value is not None and str(value) != "":
                    return str(value)
    return None


def trace_turns(trace_id: str, runs: list[dict], index: Index) -> list[tuple[str | None, str, list[dict]]]:
    """A LangSmith trace is one turn: (its thread, its id, its runs). The thread is its root's, else any
    run's (the SDK copies a parent's metadata onto its children, so an export filtered to LLM runs keeps it)."""
    roots = [r for r in runs if index.parent(r) is None]
    key = next((k for r in [*roots, *runs] if (k := thread_key(r)) is not None), None)
    return [(key, trace_id, runs)]


def import_langsmith(path: Path, llm_target: str = "llm", tool_map: dict[str, str] | None = None) -> ImportResult:
    return import_runs(path, flatten, build_session, llm_target, tool_map, trace_turns)


def start_of(run: dict) -> float:
    """A run's start as seconds: an ISO time (LangSmith) or nanoseconds since the epoch (OTLP)."""
    raw = str(run.get("start_time") or "")
    if raw.isdigit():
        return int(raw) / 1e9
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def conversations(index: Index, turns_of) -> list[tuple[str | None, list[tuple[str, list[dict]]]]]:
    """The sessions to build, in the order their first trace appears: (None, [one trace]) as ever, or
    (thread, its turns in start-time order) for the turns `turns_of` keys with one thread."""
    out: list[tuple[str | None, list]] = []
    threads: dict[str, list] = {}
    for trace_id, group in index.traces().items():
        for key, unit_id, runs in turns_of(trace_id, group, index):
            if key is None:
                out.append((None, [(unit_id, runs)]))
                continue
            if key not in threads:
                threads[key] = []
                out.append((key, threads[key]))
            threads[key].append((unit_id, runs))
    for _, units in out:
        if len(units) > 1:
            units.sort(key=lambda u: min((start_of(r), index.sort_key(r)) for r in u[1]))
    return out


def import_runs(path: Path, runs_of, build, llm_target: str, tool_map: dict[str, str] | None,
                turns_of=None) -> ImportResult:
    """The import LangSmith and OpenTelemetry share: each document -> runs (`runs_of`; a ValueError
    skips that document) -> one Index -> a session per trace (`build`; Skip skips that trace), or per
    conversation: the turns `turns_of` puts in one thread, each built as a trace is, joined in order.

    Linear in the runs; the heap is frozen while it imports (see gate/heap.py), so a process
    already holding a large heap (a test session, a gate run) does not walk it again per batch."""
    with frozen_heap():
        docs, bad_lines = read_documents(path)
        result = ImportResult(skipped=list(bad_lines))
        runs: list[dict] = []
        for n, doc in enumerate(docs):
            try:
                runs.extend(runs_of(doc))
            except ValueError as exc:
                where = f"line {n + 1}" if len(docs) > 1 else str(path)
                result.skipped.append((where, str(exc)))
        index = Index(runs)
        wrappers = index.wrappers()
        turns_of = turns_of or (lambda trace_id, group, _index: [(None, trace_id, group)])
        tool_map = tool_map or {}
        for key, units in conversations(index, turns_of):
            if len(units) == 1:  # a single trace, a thread of one turn included: imported as it always was
                unit_id, group = units[0]
                try:
                    result.sessions.append(build(unit_id, group, index, wrappers, llm_target, tool_map))
                except Skip as exc:
                    result.skipped.append((unit_id, str(exc)))
                continue
            turns = []
            for n, (unit_id, group) in enumerate(units, 1):
                try:
                    turns.append(build(unit_id, group, index, wrappers, llm_target, tool_map))
                except Skip as exc:
                    result.skipped.append((key, f"conversation of {len(units)} turns: turn {n} "
                                                f"(trace {unit_id}): {exc}"))
                    break
            else:
                result.sessions.append(conversation_of(turns[0].source, key, turns))
        return result
