"""chaos-gate's bootstrap: the gate puts this directory first on the agent's PYTHONPATH.

Python imports `sitecustomize` once at start-up; this one installs the tool-call
instrumentation (chaos_gate_agent) when the gate set CHAOS_GATE_FN_URL — or, in a service the
gate started, the watch on who connects to it (CHAOS_GATE_PEER_LOG) — then hands over
to the agent's own `sitecustomize`, if its environment has one, so nothing the agent
relied on is shadowed. `agent.instrument: off` keeps this directory off the path.
"""

import os
import sys


def _chain() -> None:
    """Import the next `sitecustomize` on sys.path, as if this one were not there."""
    import importlib

    here = os.path.dirname(os.path.abspath(__file__))
    saved = list(sys.path)
    me = sys.modules.pop("sitecustomize", None)
    try:
        sys.path[:] = [p for p in saved if os.path.abspath(p or ".") != here]
        importlib.import_module("sitecustomize")
    except ImportError:
        pass
    except Exception as exc:  # noqa: BLE001 - the agent's own hook failed: the same as without us
        print(f"sitecustomize: {type(exc).__name__}: {exc}", file=sys.stderr)
    finally:
        sys.path[:] = saved
        if me is not None:
            sys.modules["sitecustomize"] = me


if os.environ.get("CHAOS_GATE_FN_URL"):
    try:
        import chaos_gate_agent

        chaos_gate_agent.install()
    except Exception as exc:  # noqa: BLE001 - never break the agent's start-up
        print(f"chaos-gate instrumentation not installed: {type(exc).__name__}: {exc}", file=sys.stderr)
elif os.environ.get("CHAOS_GATE_PEER_LOG"):
    try:
        from chaos_gate_agent import peers

        peers.install()
    except Exception as exc:  # noqa: BLE001 - never break the service's start-up
        print(f"chaos-gate peer watch not installed: {type(exc).__name__}: {exc}", file=sys.stderr)
_chain()
