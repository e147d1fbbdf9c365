"""Send one input to the agent (HTTP or a command) and classify what came back.

Every way a call can end maps to a reason code, so the report can tell a timeout
from a crash from a bad payload: ok, agent_timeout, agent_crash, connection_error,
http_4xx, http_5xx, exit_nonzero, bad_output_encoding, bad_output_json,
bad_output_shape, output_flood, stream_error. An answer that is not valid UTF-8 (or that smuggles a
lone surrogate through a JSON escape) is `bad_output_encoding`, never silently
repaired: replacing bytes would make a broken agent look sound, and a lone surrogate
cannot be written to any UTF-8 report.

A streamed answer (SSE, NDJSON: `stream:`) is read by gate/agent/streams.py into the assistant's
text; an error event inside its 200 is `stream_error`, with the error's message in `detail`.

A crash or a non-zero exit carries the end of what the agent wrote to its log during
that call (a command's stderr, a process's log) in `detail`, after `LOG_MARK`, so the
report can show why it died (a `ModuleNotFoundError`) and not only that it did.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path


from gate.transport.clock import AgentClock
from gate.agent import separation
from gate.agent.process import argv_of
from gate.agent.streams import VERCEL_HEADER, StreamRead, is_adk_list, read_documents, read_stream, stream_kind
from gate.report.log_tail import LOG_TAIL_CHARS, with_log_tail
from gate.templates import PathError, filling, pick
from gate.config.models import CommandInvoke, HttpInvoke, HttpRequestSpec
from gate.transport import WireClient, WireError

MAX_OUTPUT_BYTES = 1 << 20
_BODY_JSON = json.JSONEncoder(ensure_ascii=False)  # json.dumps with an option builds an encoder per call
SURROGATE = re.compile("[\ud800-\udfff]")
@dataclass
class RawOutcome:
    output: str | None
    reason: str
    status: int | None = None
    latency_ms: float = 0.0
    detail: str = ""
    log: str = ""  # what the agent's log gained during this call (its end): shown when the cell fails
    turns: list | None = None  # a conversation's transcript, one dict per turn sent (gate/agent/conversation.py)


def _as_text(value) -> str:
    if value is None:  # `{"reply": null}`: the agent answered, with nothing (whole_answer's to judge), no crash
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def decode_strict(data: bytes) -> tuple[str | None, str]:
    """(text, "") for valid UTF-8, else (None, a detail naming the first bad byte)."""
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError as exc:
        return None, f"invalid UTF-8 at byte {exc.start}: {data[exc.start:exc.start + 8]!r}"


def _surrogate_detail(text: str) -> str:
    m = SURROGATE.search(text)
    return f"lone surrogate U+{ord(m.group()):04X} at character {m.start()}" if m else ""


def extract_output(body: bytes, path: str) -> tuple[str | None, str, str]:
    """(output, reason, detail) from a 2xx body and the configured JSON path."""
    text, bad = decode_strict(body)
    if text is None:
        return None, "bad_output_encoding", bad
    output, reason, detail = _pick_output(text, path)
    if output is not None and not output.isascii() and (bad := _surrogate_detail(output)):  # ASCII holds none
        return None, "bad_output_encoding", bad
    return output, reason, detail


def _pick_output(text: str, path: str) -> tuple[str | None, str, str]:
    try:
        doc = json.loads(text)
    except ValueError:
        if path == "$":
            return text, "ok", ""
        return None, "bad_output_json", f"response is not JSON: {text[:200]!r}"
    if path == "$" and is_adk_list(doc):  # Google ADK's /run: its events, read as /run_sse's stream is
        return _judged(read_documents(doc), "ADK /run", None, text)
    try:
        return _as_text(pick(doc, path)), "ok", ""
    except PathError as exc:
        return None, "bad_output_shape", str(exc)


class _Shape:
    """A request template made once (gate/templates.py `filling`), filled for every cell."""

    __slots__ = ("spec", "url", "headers", "body")

    def __init__(self, spec: HttpRequestSpec):
        self.spec = spec  # held, so the id it is cached under stays this spec's
        self.url, self.headers = filling(spec.url), filling(spec.headers or {})
        self.body = filling(spec.body) if spec.body is not None and spec.method != "GET" else None


_SHAPES: dict[int, _Shape] = {}


def _shape(spec: HttpRequestSpec) -> _Shape:
    found = _SHAPES.get(id(spec))
    if found is None or found.spec is not spec:
        if len(_SHAPES) >= 256:
            _SHAPES.clear()
        found = _SHAPES[id(spec)] = _Shape(spec)
    return found


def _encode_json(value) -> str:
    """`_BODY_JSON.encode(value)`, through the C encoder made once: the same text (no circular
    check: a body comes from YAML, which the config loader refuses to let refer to itself)."""
    if isinstance(value, str):
        return _BODY_JSON.encode(value)
    return "".join(_C_BODY_JSON(value, 0)) if _C_BODY_JSON is not None else _BODY_JSON.encode(value)


_C_BODY_JSON = None if json.encoder.c_make_encoder is None else json.encoder.c_make_encoder(
    None, _BODY_JSON.default, json.encoder.encode_basestring, None, _BODY_JSON.key_separator,
    _BODY_JSON.item_separator, _BODY_JSON.sort_keys, _BODY_JSON.skipkeys, _BODY_JSON.allow_nan)


async def send(client: WireClient, spec: HttpRequestSpec, ctx: dict) -> tuple[int, bytes, bool]:
    """(status, body up to the cap, flooded?)"""
    status, _, body, flooded, _ = await exchange(client, spec, ctx, read_headers=False)
    return status, body, flooded


async def exchange(client: WireClient, spec: HttpRequestSpec, ctx: dict,
                   read_headers: bool = True) -> tuple[int, list, bytes, bool, bool]:
    """(status, response headers (empty unless read), body up to the cap, flooded?, cut?: the connection
    closed before the body ended). The cap holds for a stream as for one answer: an endless stream is a
    flood, never an unbounded buffer."""
    shape = _shape(spec)
    headers = [(k.lower(), v) for k, v in shape.headers(ctx).items()]
    body = b""
    if shape.body is not None:
        body = _encode_json(shape.body(ctx)).encode()
        if not any(k == "content-type" for k, _ in headers):
            headers.append(("content-type", "application/json"))
    status, got, chunks, close = await client.request(spec.method, shape.url(ctx), headers, body,
                                                      read_headers=read_headers)
    whole = chunks.arrived_whole()  # the usual small answer came in with its headers: no reading loop
    if whole is not None:
        await close()
        flooded = len(whole) > MAX_OUTPUT_BYTES
        return status, got, whole[:MAX_OUTPUT_BYTES] if flooded else whole, flooded, False
    parts, size = [], 0
    try:
        async for chunk in chunks:
            parts.append(chunk)
            size += len(chunk)
            if size > MAX_OUTPUT_BYTES:
                return status, got, b"".join(parts)[:MAX_OUTPUT_BYTES], True, False
    finally:
        await close()
    return status, got, b"".join(parts), False, chunks.broken


async def invoke_http(client: WireClient, spec: HttpInvoke, ctx: dict, deadline: float,
                      clock: AgentClock | None = None) -> RawOutcome:
    """`deadline` and the latency measured are agent time (gate/agent/dilation.py: the same as real
    time unless the agent's clock is dilated)."""
    clock = clock or AgentClock()
    clock.start()
    elapsed = lambda: clock.elapsed() * 1000  # noqa: E731
    try:
        status, headers, body, flooded, cut = await clock.within(
            exchange(client, spec, ctx, read_headers=spec.stream != "off"), deadline)
    except TimeoutError:
        return RawOutcome(None, "agent_timeout", None, elapsed(), f"no answer within {deadline:g}s")
    except WireError as exc:
        return RawOutcome(None, "connection_error", None, elapsed(), f"{type(exc).__name__}: {exc}")
    if flooded:
        return RawOutcome(None, "output_flood", status, elapsed(), f"response over {MAX_OUTPUT_BYTES} bytes")
    if status >= 400:
        reason = "http_5xx" if status >= 500 else "http_4xx"
        return RawOutcome(None, reason, status, elapsed(), body[:300].decode("utf-8", "replace"))
    kind = stream_kind(spec.stream, _header(headers, "content-type"), bool(_header(headers, VERCEL_HEADER)))
    if kind is not None and cut and _framed(headers):
        return RawOutcome(None, "stream_error", status, elapsed(),
                          f"the {kind} stream was cut: the connection closed before its end ({len(body)} bytes in)")
    if kind is not None:
        output, reason, detail = extract_stream(body, kind, spec.select)
    else:
        output, reason, detail = extract_output(body, spec.output)
    return RawOutcome(output, reason, status, elapsed(), detail)


def _header(headers: list, name: str) -> str:
    return next((v for k, v in headers if k.lower() == name), "")


def _framed(headers: list) -> bool:
    """The body's end is marked (a length, or chunks), so a close before it is a cut; a body ended by the
    close itself (HTTP/1.0 style) is whole when the connection closes."""
    return bool(_header(headers, "content-length")) or "chunked" in _header(headers, "transfer-encoding").lower()


def extract_stream(body: bytes, kind: str, select: str | None) -> tuple[str | None, str, str]:
    """(output, reason, detail) of a 2xx streamed body: the assistant's text (gate/agent/streams.py), or
    `stream_error` with the message of an error event the agent sent inside its 200."""
    text, bad = decode_strict(body)
    if text is None:
        return None, "bad_output_encoding", bad
    return _judged(read_stream(text, kind, select), kind, select, text)


def _judged(read: StreamRead, kind: str, select: str | None, text: str) -> tuple[str | None, str, str]:
    """The answer of a read stream (or list of events): an error event is a failed run, a stream no
    extractor could read is said, never passed as an empty answer."""
    if read.error is not None:
        said = f"; its answer so far: {read.text[:200]!r}" if read.text else ""
        return None, "stream_error", f"the {kind} stream reported an error: {read.error[:500]}{said}"
    if not read.recognised:  # an empty stream, or one of a shape no extractor knows: said, never an empty pass
        how = f"no event matched select {select}" if select else "no event carried text the built-in extractors know"
        return None, "bad_output_shape", f"{read.events} {kind} event(s), {how}: {text[:200]!r} " \
                                         "(set agent.invoke.http.select)"
    if not read.text.isascii() and (bad := _surrogate_detail(read.text)):
        return None, "bad_output_encoding", bad
    return read.text, "ok", ""


async def _read_capped(stream: asyncio.StreamReader) -> tuple[bytes, bool]:
    data = bytearray()
    while chunk := await stream.read(65536):
        data += chunk
        if len(data) > MAX_OUTPUT_BYTES:
            return bytes(data[:MAX_OUTPUT_BYTES]), True
    return bytes(data), False


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def log_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def read_from(path: Path, start: int) -> str:
    """What the log gained since `start`, its last LOG_TAIL_CHARS at most; "" when it gained nothing."""
    return _read_from(path, start) if log_size(path) > start else ""


def _read_from(path: Path, start: int) -> str:
    """What the log gained since `start` (the command's stderr), its last LOG_TAIL_CHARS at most."""
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(start, size - 4 * LOG_TAIL_CHARS))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _as_user(user: str, argv: list[str], cwd: Path, env: dict, configured: dict,
             instance: int = 0) -> tuple[list, dict, dict]:
    """(argv, env, Popen's user arguments) for a command run as agent.user (gate/agent/separation.py).
    uvloop's subprocess takes no `user`: there the switch is setpriv's, in front of the argv."""
    who = separation.choose(user, argv, cwd, env, named=configured, instance=instance)
    env = separation.as_user(env, who, configured)
    if who is None:
        return argv, env, {}
    if type(asyncio.get_running_loop()).__module__.startswith("uvloop"):
        return _setpriv(who, argv, env)
    return argv, env, who.popen()


def _setpriv(who: separation.Identity, argv: list, env: dict) -> tuple[list, dict, dict]:
    """setpriv in front of the argv. An LD_PRELOAD (libfaketime, gate/agent/dilation.py) is handed on by
    `env` after the switch: loaded into setpriv, it would make its shared clock as root, out of the user's reach."""
    if "LD_PRELOAD" not in env:
        return who.setpriv() + argv, env, {}
    env = dict(env)
    preload = env.pop("LD_PRELOAD")
    return [*who.setpriv(), shutil.which("env") or "/usr/bin/env", f"LD_PRELOAD={preload}", *argv], env, {}


async def _spawn(argv: list, cwd: Path, env: dict, log_path: Path, as_user: dict,
                 limit: int = 1 << 16) -> tuple[asyncio.subprocess.Process | None, int, str]:
    """(the started command, where its stderr starts in the log, "") or (None, _, why it could not start)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        log_start = log.seek(0, os.SEEK_END)  # this call's stderr is what the log gains from here
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, cwd=cwd, env=env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=log, start_new_session=True, limit=limit, **as_user)
        except OSError as exc:
            return None, log_start, f"could not start {argv[0]!r}: {exc}"
    return proc, log_start, ""


def _exit_summary(code: int, out: bytes) -> tuple[str, str]:
    """(reason, summary) of a command that exited with `code` != 0, its stdout's end quoted."""
    reason = "agent_crash" if code < 0 else "exit_nonzero"
    stdout = out.decode("utf-8", "replace").rstrip("\n")[-300:]
    summary = (f"exit status {code}" if code > 0 else f"killed by signal {-code}") + \
        (f"; its stdout ends: {stdout}" if stdout else "")
    return reason, summary


async def invoke_command(spec: CommandInvoke, text: str, cwd: Path, env: dict, log_path: Path,
                         deadline: float, clock: AgentClock | None = None, user: str = "off",
                         instance: int = 0) -> RawOutcome:
    argv = argv_of(spec.command)
    if spec.input == "arg":
        argv = argv + [text] if isinstance(spec.command, list) else argv[:2] + [f'{argv[2]} "$1"', "sh", text]
    try:
        argv, env, as_user = _as_user(user, argv, cwd, env, spec.env, instance)
    except separation.Unreachable as exc:
        return RawOutcome(None, "agent_crash", None, 0.0, str(exc))
    clock = clock or AgentClock()
    clock.start()
    elapsed = lambda: clock.elapsed() * 1000  # noqa: E731
    proc, log_start, failed = await _spawn(argv, cwd, env, log_path, as_user)
    if proc is None:
        return RawOutcome(None, "agent_crash", None, 0.0, failed)
    clock.pid_of = lambda: proc.pid

    async def converse():
        if spec.input == "stdin":
            try:
                proc.stdin.write(text.encode())
                await proc.stdin.drain()
            except (BrokenPipeError, ConnectionResetError):
                pass
        proc.stdin.close()
        out, flooded = await _read_capped(proc.stdout)
        if flooded:
            _kill_group(proc.pid)
            await proc.wait()
            return out, True, None
        return out, False, await proc.wait()

    try:
        out, flooded, code = await clock.within(converse(), deadline)
        if flooded:
            return RawOutcome(None, "output_flood", None, elapsed(), f"stdout over {MAX_OUTPUT_BYTES} bytes")
    except TimeoutError:
        _kill_group(proc.pid)
        await proc.wait()
        return RawOutcome(None, "agent_timeout", None, elapsed(), f"no exit within {deadline:g}s")
    finally:
        _kill_group(proc.pid)  # grandchildren left behind by the command
    if code != 0:
        reason, summary = _exit_summary(code, out)
        return RawOutcome(None, reason, code, elapsed(), with_log_tail(summary, _read_from(log_path, log_start)))
    output, bad = decode_strict(out)
    if output is None:
        return RawOutcome(None, "bad_output_encoding", 0, elapsed(), bad)
    return RawOutcome(output.rstrip("\n"), "ok", 0, elapsed(), log=_read_from(log_path, log_start))


def one_line(text: str) -> str:
    """A turn as the one line a `conversation: lines` command reads: its line breaks become spaces."""
    return " ".join(text.splitlines()) if "\n" in text or "\r" in text else text


class LineSession:
    """A `conversation: lines` command (docs/conversations.md): ONE process for a whole conversation, each
    turn written to its stdin as one line, each answer read from its stdout as one line, each within the
    turn's deadline. It starts at the first turn and is ended by `close` (stdin closed, a moment to exit,
    then its process group killed). A turn that gets no line (the process exited, timed out, flooded) ends
    it: the conversation ends there, as any failed turn ends one."""

    EXIT_GRACE = 2.0  # seconds a finished conversation's process gets to exit on its own after its stdin closes

    def __init__(self, spec: CommandInvoke, cwd: Path, env: dict, log_path: Path, user: str = "off",
                 instance: int = 0):
        self.spec, self.cwd, self.env, self.log_path = spec, cwd, env, log_path
        self.user, self.instance = user, instance
        self.proc: asyncio.subprocess.Process | None = None

    async def _start(self) -> str:
        """"" once the process runs, else why it could not start."""
        try:
            argv, env, as_user = _as_user(self.user, argv_of(self.spec.command), self.cwd, self.env, self.spec.env,
                                          self.instance)
        except separation.Unreachable as exc:
            return str(exc)
        self.proc, _, failed = await _spawn(argv, self.cwd, env, self.log_path, as_user, limit=MAX_OUTPUT_BYTES)
        return failed

    async def ask(self, text: str, deadline: float, clock: AgentClock | None = None) -> RawOutcome:
        clock = clock or AgentClock()
        log_start = log_size(self.log_path)
        first = self.proc is None
        if first:  # its start is the first turn's time, as a per-turn command's start is its turn's
            clock.start()
            failed = await self._start()
            if failed:
                return RawOutcome(None, "agent_crash", None, 0.0, failed)
        proc = self.proc
        clock.pid_of = lambda: proc.pid
        if not first:
            clock.start()
        elapsed = lambda: clock.elapsed() * 1000  # noqa: E731
        try:
            proc.stdin.write(one_line(text).encode() + b"\n")
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # it exited: its stdout's end says so below
        try:
            line = await clock.within(proc.stdout.readuntil(b"\n"), deadline)
        except TimeoutError:
            await self.close(grace=0)
            return RawOutcome(None, "agent_timeout", None, elapsed(), f"no answer line within {deadline:g}s")
        except asyncio.LimitOverrunError:
            await self.close(grace=0)
            return RawOutcome(None, "output_flood", None, elapsed(), f"an answer line over {MAX_OUTPUT_BYTES} bytes")
        except asyncio.IncompleteReadError as exc:  # its stdout ended before the line: the process is gone
            return await self._ended(exc.partial, elapsed(), log_start)
        output, bad = decode_strict(line.rstrip(b"\r\n"))
        if output is None:
            return RawOutcome(None, "bad_output_encoding", None, elapsed(), bad)
        return RawOutcome(output, "ok", None, elapsed(), log=_read_from(self.log_path, log_start))

    async def _ended(self, partial: bytes, elapsed: float, log_start: int) -> RawOutcome:
        """The outcome of a turn whose process closed its stdout before answering it."""
        proc = self.proc
        try:
            code = await asyncio.wait_for(proc.wait(), self.EXIT_GRACE)
        except TimeoutError:  # stdout closed, the process still there: it will answer nothing more
            code = None
        await self.close(grace=0)
        log = _read_from(self.log_path, log_start)
        if code:
            reason, summary = _exit_summary(code, partial)
            return RawOutcome(None, reason, code, elapsed, with_log_tail(summary, log))
        said = f"; its stdout ends: {partial.decode('utf-8', 'replace')[-300:]}" if partial else ""
        how = "exited with status 0" if code == 0 else "closed its stdout"
        return RawOutcome(None, "agent_crash", code, elapsed,
                          with_log_tail(f"{how} before answering this turn{said}", log))

    async def close(self, grace: float | None = None) -> None:
        """End the conversation: stdin closed (a chat loop ends on EOF), then its process group killed."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()
        except (BrokenPipeError, ConnectionResetError, RuntimeError):
            pass
        grace = self.EXIT_GRACE if grace is None else grace
        if proc.returncode is None and grace > 0:
            try:
                await asyncio.wait_for(proc.wait(), grace)
            except TimeoutError:
                pass
        _kill_group(proc.pid)  # it, and whatever it left behind
        await proc.wait()
