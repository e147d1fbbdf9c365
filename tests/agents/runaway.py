"""An agent whose handler outlives its cell: on RUNAWAY it keeps calling its tool for
seconds after the gate's deadline, and it shrugs off SIGTERM, so some of those calls
are certain to reach the proxy after the cell ended (stdlib only).

ONCE calls the tool once and answers with what it said; any other input gets an
immediate answer without a tool call.
"""

import os
import signal
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from httpkit import AgentHandler, serve_agent  # noqa: E402  (tests/httpkit.py: the shared JSON handler)

TOOL = os.environ["TOOL_URL"].rstrip("/")
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the gate's SIGKILL after its grace period ends us


class Handler(AgentHandler):
    def do_POST(self):
        data = self.json_body()
        if "ONCE" in data.get("input", ""):
            try:
                said = urllib.request.urlopen(f"{TOOL}/orders/1", timeout=5).read().decode()
            except OSError as exc:
                said = f"tool failed: {exc}"
            return self.reply(200, {"reply": f"tool said {said}."})
        if "RUNAWAY" not in data.get("input", ""):
            return self.reply(200, {"reply": "calm answer."})
        until = time.monotonic() + 6
        while time.monotonic() < until:  # a retry storm that ignores every deadline
            try:
                urllib.request.urlopen(f"{TOOL}/orders/1034", timeout=2).read()
            except OSError:
                pass
            time.sleep(0.05)
        self.reply(200, {"reply": "finally done."})


serve_agent(Handler, "runaway agent")
