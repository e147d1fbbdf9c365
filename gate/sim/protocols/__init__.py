"""The sim on agents whose tool protocol is text: DSPy's adapters (dspy.py), smolagents' text-borne calls (smolagents.py).

Most frameworks hand the model native tools and send results back as tool messages, which
every dialect decodes into the neutral Conversation; the generic Script reads that. Two
common ones do not, and with the usual rule ("call T, then answer") a model that only
read native fields would fail them (DSPy: `AdapterParseError`) or loop (smolagents):

- DSPy asks for *fields* in its own text format, its tools in the prompt (dspy.py);
- smolagents writes past calls as text and sends results back as user messages, or wants code (smolagents.py).

So each module translates such a request into the neutral conversation a native agent
would have sent (the trajectory or the text-borne calls become ToolCalls and ToolResults),
lets the generic Script decide exactly as it decides for every other framework, and
writes its turn back in the agent's protocol: a call as `next_tool_name` + `next_tool_args`,
an answer as `finish` and then the extract step's output fields; a text answer as a
`final_answer` call where the request offers that tool; for a CodeAgent, the calls (their
results printed) or `final_answer(...)` as code. A request in neither form is the
generic Script's, untouched.
"""

from __future__ import annotations

from gate.config.sim import SimConfig
from gate.dialects.model import Conversation
from gate.sim.protocols.dspy import DspyScript, dspy_request
from gate.sim.protocols.smolagents import FINAL_ANSWER, CodeScript, FinalAnswerScript, code_tools, neutral
from gate.sim.script import Script

__all__ = ["CodeScript", "DspyScript", "FinalAnswerScript", "script_for"]


def script_for(spec: SimConfig, conv: Conversation):
    """What answers `conv`: DSPy's fields, a CodeAgent's code, the neutral conversation (a `final_answer`
    tool's call for the answer), or — for every other request — the generic Script on `conv` itself."""
    req = dspy_request(conv)
    if req is not None:
        return DspyScript(spec, conv, req)
    in_code = code_tools(conv)
    if in_code is not None:
        return CodeScript(spec, conv, in_code)
    translated = neutral(conv)
    offers_final = any(t.name == FINAL_ANSWER for t in conv.tools)
    if translated is not None or offers_final:
        return FinalAnswerScript(spec, conv, translated or conv)
    return Script(spec, conv)
