"""An MCP upstream that outlives its sessions: a service restarted per cell keeps its clients' sessions alive.

A gate service with `restart: per_cell` (a fresh world per cell) comes back on the same port
knowing no session, and answers the agent's next request, which carries the session id it
was given at start-up, with 404 as the MCP spec says. The spec then wants the client to start
a new session, but real clients do not: the `mcp` SDK's (under pydantic-ai, the OpenAI Agents
SDK, ...) raises "Session terminated" on every later call, so a sound agent would fail every
cell after the first, charged to the agent for what the gate's restart did.

So the proxy keeps the session on the agent's behalf, for the gate's own restarts only: a
server that expires a session by itself is the agent's to handle, and is left to it. It
remembers the last `initialize` the agent sent through this upstream and, per session, the
service's restart count when it was opened (`generation`: the runner's count of the gate's
restarts of the service behind this URL). When a request carrying a session opened before a
restart is answered 404, it opens a new session with that same `initialize` (and
`notifications/initialized`), sends the request again under the new id, and from then on
rewrites the agent's old id to the new one on the way up and back on the way down. The 404'd request was never executed, so nothing runs
twice; a fault on the request acts on the answer it gets in the new session, as on any other.
Anything else (no initialize seen, the new session refused) passes the 404 through as it was.
"""

from __future__ import annotations

from gate.proxy.exchange import RequestInfo, UpstreamResponse

SESSION = "mcp-session-id"


def _header(headers, name: str) -> str | None:
    return next((v for k, v in headers if k.lower() == name), None)


def _with_session(headers, session: str) -> list[tuple[str, str]]:
    return [(k, v) for k, v in headers if k.lower() != SESSION] + [("mcp-session-id", session)]


class SessionKeeper:
    """Wraps an MCP upstream (HttpUpstream): its `send`, with sessions re-opened after a restart."""

    def __init__(self, inner, generation=lambda: 0):
        self.inner = inner
        self.generation = generation  # how many times the gate has restarted the service behind it
        self.hello: tuple[list[tuple[str, str]], bytes] | None = None  # the agent's last initialize
        self.born: dict[str, int] = {}  # live session id -> the generation it was opened in
        self.renamed: dict[str, str] = {}  # the agent's session id -> the upstream's live one

    def __getattr__(self, name):  # base_url, client, ...: the wrapped upstream's
        return getattr(self.inner, name)

    async def send(self, info: RequestInfo, headers, body: bytes) -> UpstreamResponse:
        if info.method == "POST" and info.rpc_method == "initialize":
            self.hello = ([(k, v) for k, v in headers if k.lower() != SESSION], body)
            resp = await self.inner.send(info, headers, body)
            opened = _header(resp.headers, SESSION)
            if opened is not None:
                self.born[opened] = self.generation()
            return resp
        theirs = _header(headers, SESSION)
        if theirs is None:
            return await self.inner.send(info, headers, body)
        live = self.renamed.get(theirs, theirs)
        resp = await self.inner.send(info, _with_session(headers, live), body)
        if resp.status == 404 and self.hello is not None and self.born.get(live, self.generation()) < self.generation():
            fresh = await self._reopen(info)
            if fresh is not None:
                await resp.aclose()
                self.renamed[theirs] = live = fresh
                resp = await self.inner.send(info, _with_session(headers, live), body)
                resp.note = f"the MCP upstream had forgotten session {theirs[:12]}: the gate opened a new one"
        if live != theirs:  # the agent keeps seeing its own id
            resp.headers = [(k, theirs if k.lower() == SESSION else v) for k, v in resp.headers]
        return resp

    async def _reopen(self, like: RequestInfo) -> str | None:
        """A new session with the agent's own initialize; its id, or None when the upstream refuses."""
        headers, body = self.hello
        hello = RequestInfo(kind=like.kind, name=like.name, provider=like.provider, method="POST", path=like.path,
                            rpc_method="initialize")
        resp = await self.inner.send(hello, headers, body)
        session = _header(resp.headers, SESSION)
        await resp.read()
        if resp.status >= 300 or session is None:
            return None
        done = RequestInfo(kind=like.kind, name=like.name, provider=like.provider, method="POST", path=like.path,
                           rpc_method="notifications/initialized")
        note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
        ack = await self.inner.send(done, _with_session(headers, session), note)
        await ack.read()
        self.born[session] = self.generation()
        return session
