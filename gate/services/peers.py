"""Requests sent to a service around the gate's proxy: found in the service, charged to the run.

A service that answers a tool (or an LLM) is reached by the agent through the gate's proxy,
which traces and faults the call. Its real port is no secret (every uid reads /proc/net/tcp),
and without a network namespace (`agent.network: proxy-only`, which a container action cannot
make) nothing stops the agent from sending a write straight to it: the service executes it,
the trace never sees it, and `side_effect_once` counts one write where there were two.

So the gate watches from the other side: a command service that fronts a tool or model and
runs as a user of its own gets the peer watch loaded (chaos_gate_agent/peers.py through the
bootstrap's `sitecustomize`; node/peers.cjs through NODE_OPTIONS), which appends a line for each connection whose socket belongs
to neither the gate's uid nor the service's. `PeerWatch`, one more worker hook, reads the lines
a run added and keeps those of its own agent's uid: such a run is `error` / `bypassed_proxy`,
judged neither way — its trace is known to be incomplete. A service the watch could not be
loaded into (neither Python nor Node, uvloop, the agent not separated from it) is named in one line of
`run.separation`, never assumed watched.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from gate.agent import separation
from gate.config.service_refs import SERVICE_REF
from gate.instrument.environment import instrumented


def fronted(config) -> set[str]:
    """The services some tool or model upstream names: those the agent should reach only through the proxy."""
    text = json.dumps([t.model_dump(mode="json") for t in config.tools]
                      + [m.model_dump(mode="json") for m in config.llm])
    return {m.group(1) for m in SERVICE_REF.finditer(text)}


class PeerLog:
    """One service's log of connections that did not come from the gate (written by the service)."""

    def __init__(self, service: str, path: Path, uid: int):
        self.service, self.path, self.uid = service, path, uid  # uid: the service's own, which the watch trusts

    @classmethod
    def prepare(cls, service: str, who: separation.Identity | None, env: dict[str, str]) -> PeerLog | None:
        """The log, made in `who`'s private TMPDIR (out of every other uid's reach), and `env` (the
        service's) told to load the watch; None when the service runs as the gate's own user (no uid
        tells the agent's connections from the gate's then)."""
        if who is None:
            return None
        path = Path(who.tmp) / f"chaos-gate-peers-{service}.log"
        try:
            path.touch(mode=0o600)
            os.chown(path, who.uid, who.gid)
            path.chmod(0o600)
        except OSError as exc:  # never a failed start for the watch's sake: the service runs, said unwatched
            separation.note(f"service '{service}' is not watched for requests sent around the proxy: its log "
                            f"{path} could not be made ({exc.strerror})")
            return None
        env["CHAOS_GATE_PEER_LOG"] = str(path)
        env["CHAOS_GATE_PEERS_OK"] = str(os.geteuid())
        env.update(instrumented(env))  # the agent's bootstraps: sitecustomize and register.cjs load the watch
        return cls(service, path, who.uid)

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except OSError:
            return 0

    def lines_since(self, offset: int) -> list[list[str]]:
        try:
            with open(self.path, "rb") as fh:
                fh.seek(offset)
                text = fh.read().decode("utf-8", "replace")
        except OSError:
            return []
        return [line.split() for line in text.splitlines() if line.strip()]

    def unwatched_reason(self) -> str | None:
        """Why this service's connections are not (all) seen, once it is up; None when they are."""
        lines = self.lines_since(0)
        if any(words[0] == "unwatched" for words in lines):
            names = sorted({words[1] for words in lines if words[0] == "unwatched" and len(words) > 1})
            return f"it imports {', '.join(names)}, whose server accepts connections out of the watch's reach"
        if not any(words[0] == "watching" for words in lines):
            return ("the watch did not load (a Python or Node service loads it; this one is neither, or runs Python with "
                    "-S/-I)")
        return None


class PeerWatch:
    """A worker hook: after each run, the connections the services saw from this worker's agent."""

    def __init__(self, logs: list[PeerLog]):
        self.logs = logs
        self.agent_uid = None  # set by make_workers: the worker's agent's uid, once it runs (None: unknown)
        self.offsets: dict[str, int] = {}

    def env(self) -> dict[str, str]:
        return {}

    async def start(self) -> None:
        pass

    async def begin(self, cell, run: int) -> None:
        self.offsets = {log.service: log.size() for log in self.logs}

    async def end(self, cell, run: int, obs) -> None:
        uid = self.agent_uid() if callable(self.agent_uid) else None
        seen = []
        for log in self.logs:
            if uid == log.uid:  # the agent runs as the service's own user: its connections look like the service's
                separation.note(f"service '{log.service}' is not watched for requests sent around the proxy: it "
                                f"shares uid {uid} with the agent (create the user chaos-service, or name its `user`)")
                continue
            offset = self.offsets.get(log.service, 0)
            if log.size() == offset:  # the usual run: nothing written, a stat instead of a read
                continue
            peers = [w for w in log.lines_since(offset) if w[0] == "peer" and len(w) > 2]
            mine = [w for w in peers if uid is None or w[1] in (str(uid), "?")]
            if mine:
                who = f"uid {mine[0][1]}" if mine[0][1] != "?" else "a socket no table lists"
                seen.append(f"service '{log.service}' got {len(mine)} connection(s) not from the proxy "
                            f"(first from {mine[0][2]}, {who})")
        if seen:
            obs.state["bypassed"] = seen

    async def stop(self) -> None:
        pass
