"""A probe session beside a faulted conversation: what `isolates_sessions` judges (gate/contracts/sessions.py).

Started with the cell's run, it waits until the cell's fault fires — a probe that ran before the fault
would test nothing — then sends its input's turns in a session of its own on the same agent instance,
while the faulted session is held or failing. The proxy claims its calls apart (gate/proxy/probe_calls.py).
Its result goes to the cell's observation as `state["probe"]`; a fault that never fired, or fired only as
the run ended, leaves a `skipped` with the reason.
"""

from __future__ import annotations

import asyncio


class SessionProbe:
    def __init__(self, instance, hooks, cell, run: int):
        self.hook = next((h for h in hooks if hasattr(h, "probe_begin")), None)
        self.instance, self.cell, self.run = instance, cell, run
        self.done = asyncio.Event()  # the cell's own run ended
        self.task: asyncio.Task | None = None

    def start(self) -> None:
        input_id, turns, _ = self.cell.probe
        if self.hook is None:
            return
        targets = (getattr(self.cell.reference, "probe", None) or {}).get("targets", ())
        self.hook.probe_begin(turns[0], targets)
        self.task = asyncio.ensure_future(self._run())

    async def _run(self) -> dict:
        fired = asyncio.ensure_future(self.hook.fault_fired())
        ended = asyncio.ensure_future(self.done.wait())
        await asyncio.wait({fired, ended}, return_when=asyncio.FIRST_COMPLETED)
        for waiting in (fired, ended):
            waiting.cancel()
        if not fired.done() or fired.cancelled():
            return {"skipped": "the cell's fault had not fired when its run ended: no session was held to probe beside"}
        input_id, turns, history = self.cell.probe
        ctx = {"cell_id": f"{self.cell.id}#probe", "input_id": input_id, "run": str(self.run)}
        raw = await self.instance.converse(turns, history, ctx)
        return {"input": input_id, "reason": raw.reason, "answer": raw.output, "latency_ms": round(raw.latency_ms, 1),
                "detail": raw.detail, "model_calls": self.hook.probe_calls() or 0}

    async def result(self) -> dict | None:
        """The probe's outcome, once the cell's run ended (it may still be waiting on its own answer)."""
        if self.task is None:
            return None
        self.done.set()
        try:
            return await self.task
        except Exception as exc:  # the probe is the gate's own part: its failure is never the agent's
            return {"skipped": f"the probe session could not run: {exc!r}"}
