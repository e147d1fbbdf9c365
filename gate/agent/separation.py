"""Who the agent's processes run as: another uid than the gate's, when the gate can make it so.

The agent (on a pull request, the PR's code) must not reach the gate's secrets, reports or
installation. Running it as the gate's own user hands it all three through /proc and the file
system, so when the gate is root (the Action's container, most CI containers) every agent,
command invocation and service process runs as an unprivileged user instead: `chaos-agent`
(the image creates it), else `nobody` (65534), with a private writable HOME and TMPDIR made
for the run. `agent.user` (and a service's `user`) names another user, or `off`. Under `auto`,
each concurrent agent instance after the first runs as `chaos-agent-N` (N its index; the image
makes 1..7) where that account exists, so no instance reads another's /proc — its worker's `/fn/`
token. Where it does not, the instances share the agent user and the report says so.

`auto` (the default) separates only when the agent's world is reachable by that user: its
working directory and the program it starts. Where it is not, or the gate is not root, the
agent runs as the gate's own user and the report says so in one line (`run.separation`). A
user named explicitly never falls back: the start fails naming the path and the fix.

Popen's own `user`/`group`/`extra_groups` do the switch (no hand-written setuid), so
this module only decides, prepares directories and explains failures. Each user it makes is
checked against the docker socket first (gate/agent/docker_socket.py): the engine is root on
the machine, so a socket that user could connect to is taken away or reported.
"""

from __future__ import annotations

import atexit
import os
import pwd
import re
import shlex
import shutil
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from gate.agent import docker_socket

DEFAULT_USERS = {"agent": "chaos-agent", "service": "chaos-service"}  # apart: the agent reads no service's /proc
NOBODY = 65534
FIX = "make it readable by that user (chmod o+rX on it and its parent directories) or set `agent.user: off`"


@dataclass(frozen=True)
class Identity:
    """An unprivileged user and the private HOME and TMPDIR made for it in this run."""

    name: str
    uid: int
    gid: int
    home: str
    tmp: str

    def popen(self) -> dict:
        """Popen's keyword arguments that start a process as this user, with no supplementary group."""
        return {"user": self.uid, "group": self.gid, "extra_groups": []}

    def setpriv(self) -> list[str]:
        """The same switch as an argv prefix (util-linux setpriv), for an event loop whose subprocess
        API has no `user` argument (uvloop's); Unreachable when setpriv is not installed."""
        found = shutil.which("setpriv")
        if found is None:
            raise Unreachable(f"agent.user: {self.name}: a command invocation needs setpriv (util-linux) to run "
                              "as that user; install it or set `agent.user: off`")
        return [found, f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups", "--"]

    def describe(self) -> str:
        return f"{self.name} (uid {self.uid})"


class Unreachable(Exception):
    """The agent cannot start as the separated user: a path out of its reach, or no such user."""

    def __init__(self, message: str, path: str = ""):
        super().__init__(message)
        self.path = path

    @classmethod
    def at(cls, who: Identity, path: str, need: str) -> Unreachable:
        return cls(f"the agent runs as {who.describe()} (agent.user) and cannot {need} {path}: {FIX}", path)


_state: dict = {"base": None, "identities": {}, "notes": set(), "enforced": set(), "used": {}}
# Where the agent is a pull request's code (the Action), `auto` never falls back to the gate's own user:
# a box that cannot be applied is an error naming the fix. The CLI runs the team's own code: it falls back.
_policy = {"strict": False}
STRICT_FIX = ("the Action refuses to run a pull request's agent outside its box: make the path readable by that "
              "user (chmod o+rX on it and its parent directories), or set the Action input `allow-unboxed: true` "
              "for trusted code")


def require_box(strict: bool) -> None:
    """Refuse `auto`'s fallback to the gate's own user (the Action, unless `allow-unboxed`)."""
    _policy["strict"] = strict


def begin_run() -> None:
    """Forget the previous run's users, notes and private directories."""
    end_run()
    _state.update(base=None, identities={}, notes=set(), enforced=set(), used={})


def end_run() -> None:
    """Remove the run's private HOME and TMPDIR directories."""
    if _state["base"] is not None:
        shutil.rmtree(_state["base"], ignore_errors=True)
        _state["base"] = None


def summary() -> str | None:
    """The report's one line on separation; None when no process was started this run."""
    shared = _state["used"].get("agent", set()) & _state["used"].get("service", set())
    shared_note = [f"agents and services share uid {min(shared)}: an agent can read a service's /proc (create "
                   "the user chaos-service, or name a service's own `user`)"] if shared else []
    parts = sorted(_state["enforced"]) + sorted(_state["notes"]) + shared_note
    return "; ".join(parts) if parts else None


def note(line: str, enforced: bool = False) -> None:
    """Another line for `summary` (agent.network's, gate/agent/netns.py): what holds, or what does not."""
    _state["enforced" if enforced else "notes"].add(line)


def uids() -> frozenset[int]:
    """The users the run's processes were started as (never root)."""
    return frozenset(who.uid for who in _state["identities"].values() if who.uid != 0)


def _user(setting: str, what: str) -> tuple[str, int, int]:
    """(name, uid, gid) of `setting` (`auto`: chaos-agent or chaos-service, else nobody); KeyError when
    a named user does not exist."""
    name = DEFAULT_USERS.get(what, DEFAULT_USERS["agent"]) if setting == "auto" else setting
    try:
        entry = pwd.getpwuid(int(name)) if name.isdigit() else pwd.getpwnam(name)
        return entry.pw_name, entry.pw_uid, entry.pw_gid
    except KeyError:
        if setting != "auto":
            raise
        return "nobody", NOBODY, NOBODY


def _private_dirs(uid: int, gid: int) -> tuple[str, str]:
    """A HOME and a TMPDIR of the user's own, under one directory of the run (0700, the user's)."""
    if _state["base"] is None:
        _state["base"] = tempfile.mkdtemp(prefix="chaos-gate-agents-")
        atexit.register(shutil.rmtree, _state["base"], True)  # a run outside accounted_run (the pytest plugin)
        os.chmod(_state["base"], 0o711)  # each user's own directory below is private; this one only searchable
    own = Path(_state["base"]) / str(uid)
    for path in (own, own / "home", own / "tmp"):
        path.mkdir(mode=0o700, exist_ok=True)
        os.chown(path, uid, gid)
    return str(own / "home"), str(own / "tmp")


def _spare(instance: int) -> tuple[str, int, int] | None:
    """Instance `instance`'s own account (the first instance runs as the agent user): `chaos-agent-N`,
    which the image creates for N up to 7, so instances of one run cannot read each other's /proc (the
    worker's token). None when no such account exists: a uid no account has would break every program
    that asks who it is (getpwuid), so the instances then share the agent user, and the report says so."""
    try:
        entry = pwd.getpwnam(f"{DEFAULT_USERS['agent']}-{instance}")
    except KeyError:
        return None
    return entry.pw_name, entry.pw_uid, entry.pw_gid


def identity_for(setting: str, what: str = "agent", instance: int = 0) -> Identity | None:
    """The user `what` (agent or service) runs as, or None (the gate's own user) with the reason noted.
    Under `auto` each agent instance after the first gets a uid of its own (`_spare`); a user named in the
    config is that user for every instance."""
    if setting == "off":
        _state["notes"].add(f"user: off: {what}s run as the gate's own user")
        return None
    if os.geteuid() != 0:
        if setting != "auto":
            raise Unreachable(f"agent.user: {setting}: the gate runs as uid {os.geteuid()}, not root, so it "
                              "cannot start processes as another user; set `agent.user: auto` or `off`")
        _state["notes"].add(f"not separated: the gate runs as uid {os.geteuid()}, not root, so the agent "
                            "runs as the same user and can read the gate's files and environment")
        return None
    instance = instance if setting == "auto" else 0
    key = (setting, what, instance)
    if key not in _state["identities"]:
        try:
            name, uid, gid = _user(setting, what)
        except KeyError:
            raise Unreachable(f"agent.user: {setting}: no such user on this machine; create it "
                              "(useradd --system) or set `agent.user: auto` or `off`") from None
        own = _spare(instance) if instance else None
        if instance and own is None:
            _state["notes"].add(f"agent instances share {name}: create the users {DEFAULT_USERS['agent']}-1 … -N "
                                "(the image has them) to give each concurrent instance a uid of its own")
        name, uid, gid = own or (name, uid, gid)
        _state["identities"][key] = Identity(name, uid, gid, *_private_dirs(uid, gid))
        exposed = [docker_socket.guard(name, uid, gid), docker_socket.tcp_note(name, uid, gid)]  # the engine is root
        _state["notes"].update(line for line in exposed if line)
    return _state["identities"][key]


def _allows(st: os.stat_result, who: Identity, bits: int) -> bool:
    shift = 6 if st.st_uid == who.uid else 3 if st.st_gid == who.gid else 0
    return (st.st_mode >> shift) & bits == bits


def blocked(path: str | Path, who: Identity, bits: int = 4) -> str | None:
    """The first of `path` and its directories that `who` cannot use (`bits` on `path`, search on the rest)."""
    path = Path(os.path.abspath(path))
    for step in [*reversed(path.parents), path]:
        try:
            st = os.stat(step)
        except OSError:
            return None  # a path that does not exist is the program's own error to report
        want = bits if step == path else 1
        if stat.S_ISDIR(st.st_mode) and step == path:
            want |= 1
        if not _allows(st, who, want):
            return str(step)
    return None


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def programs(argv: list[str], cwd: Path, path_var: str) -> list[str]:
    """The executable an argv (or its `sh -c` line) starts, and a script file it names, as paths."""
    words = list(argv)
    if words[:2] == ["/bin/sh", "-c"] and len(words) > 2:
        try:
            words = shlex.split(words[2])
        except ValueError:
            return []
    words = [w for w in words if not _ASSIGNMENT.match(w) and w not in ("exec", "env")]
    if not words:
        return []
    first = words[0] if "/" in words[0] else shutil.which(words[0], path=path_var)
    found = [str(cwd / first) if first and not os.path.isabs(first) else first] if first else []
    script = next((w for w in words[1:] if not w.startswith("-")), None)
    if script and (cwd / script).is_file():
        found.append(str(cwd / script))
    return found


def what_runs(program: str, path_var: str, depth: int = 0) -> list[str]:
    """What starting `program` also needs to read: the interpreter its shebang names (through `env`), and for
    a Python of a virtual environment, the base interpreter and standard library its pyvenv.cfg points at —
    a venv made from a pyenv/asdf/conda Python under a 0700 home runs nowhere else."""
    found: list[str] = []
    try:
        with open(program, "rb") as fh:
            head = fh.read(256)
    except OSError:
        return found
    if head.startswith(b"#!") and depth < 3:
        words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
        if words and os.path.basename(words[0]) == "env":
            words = [w for w in words[1:] if not w.startswith("-")]
            words[:1] = [shutil.which(words[0], path=path_var) or ""] if words else []
        if words and words[0].startswith("/"):
            found += [words[0], *what_runs(words[0], path_var, depth + 1)]
    return found + _venv_base(program)


def _venv_base(program: str) -> list[str]:
    """The base interpreter and stdlib of the venv `program` (or its link) is the Python of, if it is one."""
    for candidate in dict.fromkeys((program, os.path.realpath(program))):
        cfg = Path(candidate).parent.parent / "pyvenv.cfg"
        try:
            lines = cfg.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        home = next((ln.split("=", 1)[1].strip() for ln in lines if ln.split("=", 1)[0].strip() == "home"), "")
        if home.startswith("/"):
            version = next((ln.split("=", 1)[1].strip() for ln in lines
                            if ln.split("=", 1)[0].strip() in ("version", "version_info")), "")
            lib = Path(home).parent / "lib" / f"python{'.'.join(version.split('.')[:2])}"
            return [home] + ([str(lib)] if version else [])
    return []


def named_path(value: str, who: Identity) -> str | None:
    """Where `who` is stopped on the way to a path the config hands it: read an existing one, create a new one."""
    if not value.startswith("/") or os.pathsep in value:
        return None
    path = Path(value)
    if path.exists():
        return blocked(path, who, 4)
    return blocked(path.parent, who, 3) if path.parent.is_dir() else None


def loaded(env: dict[str, str]) -> list[str]:
    """What the gate makes the agent load besides its program: the instrumentation on PYTHONPATH and in
    NODE_OPTIONS, libfaketime in LD_PRELOAD, and the gate's python that `kind: command` shims run."""
    found = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p.startswith("/")]
    found += [w.strip('"') for w in env.get("NODE_OPTIONS", "").split() if w.strip('"').startswith("/")]
    found += [p for p in re.split(r"[ :]", env.get("LD_PRELOAD", "")) if p.startswith("/")]
    found += [sys.executable] if env.get("CHAOS_GATE_REAL_PATH") else []
    return [p for p in found if os.path.exists(p)]


def check(who: Identity, argv: list[str], cwd: Path, env: dict[str, str], named=()) -> None:
    """Unreachable when `who` cannot enter `cwd`, read the program it starts (and what that runs: its
    shebang's interpreter, a venv's base interpreter and standard library), or use a path that a variable
    the config set (`named`) hands it."""
    where = blocked(cwd, who, 5)
    if where is not None:
        raise Unreachable.at(who, where, "enter its working directory at")
    started = programs(argv, cwd, env.get("PATH", ""))
    needed = started + [p for prog in started for p in what_runs(prog, env.get("PATH", ""))] + loaded(env)
    for program in dict.fromkeys(needed):
        where = blocked(os.path.realpath(program), who, 4) or blocked(program, who, 4)
        if where is not None:
            raise Unreachable.at(who, where, "read")
    for name in named:
        where = named_path(env.get(name, ""), who)
        if where is not None:
            raise Unreachable.at(who, where, f"reach the path {name} names, at")


def choose(setting: str, argv: list[str], cwd: Path, env: dict[str, str], what: str = "agent",
           named=(), instance: int = 0) -> Identity | None:
    """The user `what` runs as (`instance`: which agent instance, each its own uid under `auto`). `auto`
    falls back to the gate's user (noted) when its world (see `check`) is out of reach; a named user
    raises Unreachable."""
    who = identity_for(setting, what, instance)
    if who is None:
        return None
    try:
        check(who, argv, cwd, env, named)
    except Unreachable as exc:
        if setting != "auto":
            raise
        if _policy["strict"]:
            raise Unreachable(f"{exc.path} is out of reach of {who.describe()}, which the {what} runs as: "
                              f"{STRICT_FIX}", exc.path) from None
        # the user it would have shared is not used after all: the line says what holds, never both
        _state["notes"] = {n for n in _state["notes"] if not n.startswith(f"{what} instances share ")}
        _state["notes"].add(f"not separated: {exc.path} is out of reach of {who.describe()}, so the {what} runs "
                            "as the gate's own user; make it readable by that user (chmod o+rX on it and its parent "
                            "directories) to separate it, or set `agent.user: off` to say so")
        return None
    if not instance or setting != "auto":
        _state["enforced"].add(f"{what}s run as {who.describe()} with a private HOME and TMPDIR"
                               + (", each instance after the first as a uid of its own" if setting == "auto" and
                                  what == "agent" else ""))
    _state["used"].setdefault(what, set()).add(who.uid)
    return who


def as_user(env: dict[str, str], who: Identity | None, configured: dict[str, str] | None = None) -> dict[str, str]:
    """`env` with the user's private HOME and TMPDIR, unless the config set them itself."""
    if who is None:
        return env
    configured = configured or {}
    return {**env, **{k: v for k, v in (("HOME", who.home), ("TMPDIR", who.tmp)) if k not in configured}}


_DENIED = re.compile(r"(?:Permission denied|EACCES)[^'\"\n]*['\"]([^'\"\n]+)['\"]|([^\s:'\"]+): Permission denied")


def explain(log_tail: str, who: Identity | None) -> str:
    """A hint for a start-up failure caused by the separation, naming the path the log names."""
    if who is None or not re.search(r"Permission denied|EACCES|EPERM", log_tail):
        return ""
    match = _DENIED.search(log_tail)
    path = next((g for g in match.groups() if g), "a path") if match else "a path"
    return (f"; it runs as {who.describe()} (agent.user) and was refused {path}: give that user access to it "
            "(chmod o+rX to read it; a file it writes belongs under its own $HOME or $TMPDIR) or set `agent.user: off`")
