"""The trace of one cell run: every exchange the proxy saw, in arrival order.

Entries split into what is deterministic (target, call, fault, status, bytes) and
what is measured (start/end in ms since the run began): the first goes into the
report's verdict part, the second into its timings.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TraceEntry:
    seq: int
    target: str
    kind: str  # llm | tool
    method: str
    path: str
    model: str | None = None
    tool: str | None = None
    rpc_method: str | None = None
    status: int | None = None
    fault: str | None = None
    fault_status: str | None = None  # fired | not_applicable (the reason is in note)
    fault_index: int | None = None  # the fault's index in its scenario
    note: str = ""
    forwarded: bool = False
    handoff: str | None = None  # an LLM request a handoff brought: "transfer_to_x → Agent" (gate/dialects/handoffs.py)
    sim_fallback: str | None = None  # default | generated: the sim answered what no rule scripted
    bytes_out: int = 0
    retry_after: float | None = None
    body: bytes = field(default=b"", repr=False)  # the request body, digested only when asked
    idempotency_key: str | None = None
    start_ms: float = 0.0
    end_ms: float | None = None
    call: int = 0  # n-th call to this target in the run
    turn: int | None = None  # the conversation's turn in flight (None: a single input)
    usage: object = None  # a forwarded LLM call: Usage as read (gate/proxy/usage.py), then priced at run end
    extra: dict = field(default_factory=dict)
    # kept only while recording a session:
    response_chunks: list = field(default_factory=list)
    content_type: str = ""

    @property
    def transport(self) -> str | None:
        """function | mcp-stdio | command for an in-process call (gate/instrument); None on the wire."""
        return self.extra.get("transport")

    @property
    def body_digest(self) -> str:
        """Digest of the request body minus volatile fields; computed once, on demand
        (LLM bodies can be large, and only replay and side_effect_once need it)."""
        cached = self.extra.get("digest")
        if cached is None:
            from gate.proxy.bodies import body_digest

            cached = self.extra["digest"] = body_digest(self.body)
        return cached

    def describe(self) -> str:
        what = self.tool or self.model or ""
        return f"{self.target} {self.method} {self.path}" + (f" [{what}]" if what else "")
