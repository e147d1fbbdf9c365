"""A `kind: command` tool's shim: one invocation of the command, relayed through the worker.

Run by the shim the gate wrote first on the agent's PATH (gate/instrument/commands.py)
as `python -I -S command.py <name> <shim dir> <args...>`, by the gate's own interpreter in
isolated mode, so the agent's virtualenv never matters. One invocation is one call:

    begin {tool: <name>, transport: command, arguments: {argv, cwd}}
    run the real command (stdin passed through; stdout, stderr and exit code captured)
    end {ok, type: str | bytes, value: stdout, exit: code}
    carry out the answer: write stdout (as a fault may have rewritten it), then exit

stdout crosses as text when it is UTF-8, so `inject`, `huge` and `partial` act on it as
on any text answer; the exit code and stderr stay here unless a fault replaces them.
A failure raised by a fault is written to stderr and exits nonzero (124, as coreutils'
`timeout` does, for a timeout; an `exit_code` fault gives its own code). The real
command is the first executable of that name on PATH (and then CHAOS_GATE_REAL_PATH)
outside the shim directory; it runs with the shims off PATH and CHAOS_GATE_IN_COMMAND
set, so a command that runs another command tool is still one call (outermost traces).
Without a worker to ask, the shim simply becomes the real command (exec).

Every run of the command pays for this process's start, so it is lean on purpose: the
gate runs it with `-I -S` (no site-packages, no .pth files) and it imports neither this
package nor http.client (each would double its start-up, ~40 ms on a small CI runner);
the two POSTs of chaos_gate_agent/client.py are spoken here over one kept-alive socket.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.parse

INSIDE = "CHAOS_GATE_IN_COMMAND"
TIMEOUT_EXIT = 124
NOT_FOUND_EXIT = 127
RUN, KEEP = {"action": "run"}, {"action": "return"}


class Worker:
    """The worker's /fn/ endpoints over one kept-alive connection; None when it is away."""

    def __init__(self, url: str):
        parts = urllib.parse.urlsplit(url)
        self.host, self.port, self.base = parts.hostname, parts.port or 80, parts.path.rstrip("/")
        self.sock: socket.socket | None = None

    def post(self, path: str, doc: dict, timeout: float = 30.0) -> dict | None:
        body = json.dumps(doc).encode()
        head = (f"POST {self.base}{path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()
        for attempt in (0, 1):  # a kept-alive connection the proxy closed: once more on a new one
            try:
                if self.sock is None:
                    self.sock = socket.create_connection((self.host, self.port), timeout=timeout)
                    self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self.sock.sendall(head + body)
                return self._answer()
            except (OSError, ValueError):
                if self.sock is not None:
                    self.sock.close()
                self.sock = None
                if attempt:
                    return None
        return None

    def _answer(self) -> dict | None:
        data = b""
        while b"\r\n\r\n" not in data:
            data += self._recv()
        head, rest = data.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = dict(line.lower().split(":", 1) for line in lines[1:] if ":" in line)
        length = int(headers["content-length"])  # the proxy's /fn/ answers always carry it
        while len(rest) < length:
            rest += self._recv()
        return json.loads(rest[:length]) if status == 200 else None

    def _recv(self) -> bytes:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise OSError("connection closed")
        return chunk


def _same_dir(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _path_without(shim_dir: str, path: str) -> list[str]:
    return [d for d in path.split(os.pathsep) if not _same_dir(d or os.curdir, shim_dir)]


def real_command(name: str, shim_dir: str) -> str | None:
    """The executable the agent would have run without the shim."""
    dirs = _path_without(shim_dir, os.environ.get("PATH", "")) + \
        _path_without(shim_dir, os.environ.get("CHAOS_GATE_REAL_PATH", os.defpath))
    for d in dirs:
        candidate = os.path.join(d or os.curdir, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _child_env(shim_dir: str) -> dict:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join(_path_without(shim_dir, env.get("PATH", "")))
    env[INSIDE] = "1"
    return env


def _die_with_parent() -> None:
    """Linux: the real command is killed with the shim (an agent's subprocess timeout kills only
    its own child, and a command left running would go on writing after the call ended)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def run(real: str | None, name: str, args: list[str], shim_dir: str) -> tuple[int, bytes, bytes]:
    """(exit code, stdout, stderr) of the real command; stdin is the agent's own."""
    if real is None:
        return NOT_FOUND_EXIT, b"", f"{name}: command not found\n".encode()
    try:
        proc = subprocess.Popen([name, *args], executable=real, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=_child_env(shim_dir), preexec_fn=_die_with_parent if sys.platform == "linux"
                                else None)
    except OSError as exc:
        return 126, b"", f"{name}: {exc.strerror or exc}\n".encode()
    forward = lambda signum, _frame: proc.send_signal(signum)  # noqa: E731 - the agent's TERM/INT reach it
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    out, err = proc.communicate()
    code = proc.returncode
    return (128 - code if code < 0 else code), out, err


def encode(stdout: bytes) -> tuple[str, str]:
    try:
        return "str", stdout.decode("utf-8")
    except UnicodeDecodeError:
        return "bytes", base64.b64encode(stdout).decode()


def stdout_of(answer: dict, original: bytes) -> bytes:
    """What the agent reads from the command: its own output unless the answer carries another."""
    if answer.get("empty"):
        return b""
    if "value" not in answer:
        return original
    value = answer["value"]
    if answer.get("as") == "bytes":
        return base64.b64decode(value)
    return value.encode("utf-8") if isinstance(value, str) else json.dumps(value).encode()


def _write(stream, data: bytes) -> None:
    if data:
        stream.buffer.write(data)
        stream.buffer.flush()


def carry_out(name: str, answer: dict, result: tuple[int, bytes, bytes] | None) -> int:
    """Write what the answer says and return the exit code (after the answer's wait)."""
    time.sleep(float(answer.get("sleep") or 0))
    action = answer.get("action")
    if action == "exit":
        _write(sys.stderr, str(answer.get("stderr") or "").encode())
        return int(answer.get("code", 1))
    if action == "raise":  # a fault's failure: what did arrive is written, the rest is lost
        _write(sys.stdout, base64.b64decode(answer["partial"]) if answer.get("partial") else b"")
        message = answer.get("message") or "failed (injected by chaos-gate)"
        _write(sys.stderr, f"{name}: {message}\n".encode())
        return TIMEOUT_EXIT if answer.get("kind") == "timeout" else 1
    code, out, err = result if result is not None else (0, b"", b"")
    _write(sys.stdout, stdout_of(answer, out))
    _write(sys.stderr, err)
    return code


def main(argv: list[str]) -> int:
    name, shim_dir, args = argv[0], argv[1], argv[2:]
    real = real_command(name, shim_dir)
    url = os.environ.get("CHAOS_GATE_FN_URL", "")
    if not url or os.environ.get(INSIDE):
        if real is None:
            _write(sys.stderr, f"{name}: command not found\n".encode())
            return NOT_FOUND_EXIT
        os.execve(real, [name, *args], _child_env(shim_dir))
    worker, call_id = Worker(url), os.urandom(16).hex()
    first = worker.post("/begin", {"id": call_id, "tool": name, "transport": "command", "framework": "command",
                                   "arguments": {"argv": [name, *args], "cwd": os.getcwd()}, "returns": "str"}) or RUN
    if first.get("action") != "run":
        return carry_out(name, first, None)
    time.sleep(float(first.get("sleep") or 0))
    result = run(real, name, args, shim_dir)
    vtype, value = encode(result[1])
    answer = worker.post("/end", {"id": call_id, "ok": True, "type": vtype, "value": value, "exit": result[0]}) or KEEP
    return carry_out(name, answer, result)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
