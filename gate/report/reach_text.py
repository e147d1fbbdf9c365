"""The report's "what the gate reached" in words, shared by every renderer.

One line says what was reached (wire upstreams, in-process seams); each note says
what was not and how to reach it. Kept apart so the Markdown, HTML and terminal
views cannot drift from each other.
"""

from __future__ import annotations


def reach_lines(reach) -> list[str]:
    if reach is None:
        return []
    wire = ", ".join(reach.wire) or "nothing"
    inproc = ", ".join(reach.in_process) or "nothing"
    lines = [f"Reached on the wire: {wire}; in the agent's process: {inproc}"]
    lines += [f"Could not patch {f}" for f in reach.failed]
    handoffs = getattr(reach, "handoffs", None) or []
    if handoffs:  # switches between the agent's own agents: no tool, nothing to reach (gate/dialects/handoffs.py)
        lines.append("Handoffs: " + ", ".join(h + (" (taken)" if " → " in h else " (offered, never taken)")
                                              for h in handoffs))
    lines += [note[:1].upper() + note[1:] for note in reach.notes]
    return lines
