"""smolagents (1.x): tools, at `smolagents.tools.Tool.__call__`, which runs the tool's `forward`.

Both agents call a tool through it: ToolCallingAgent's `execute_tool_call` calls
`tool(**arguments, sanitize_inputs_outputs=True)` inside its own `try`, where an exception
becomes an `AgentToolExecutionError` ("Error executing tool ...") that the next step shows
the model as an error; CodeAgent's local Python executor calls the same object from the
model's code, where an exception fails that code step the same way (`AgentExecutionError`).
`@tool` functions, `Tool` subclasses and `Tool.from_*` tools all inherit this `__call__`.

The seam wraps it on the base class: a fault is raised where `forward` would raise, inside
the agent's `try`, and a value fault acts on what the call returned (after smolagents'
output sanitising, so on what the agent records as the observation). Left alone:
`FinalAnswerTool` (the framework's way to end a run, not a tool of the agent's) and
subclasses with a `__call__` of their own (PipelineTool runs a local transformers model).
Names, descriptions and `inputs` (what the model's JSON schema is built from) are not touched.
"""

from __future__ import annotations

import functools

from chaos_gate_agent.call import Seam, call_sync


class SmolagentsSeam(Seam):
    transport = "function"
    framework = "smolagents"


SEAM = SmolagentsSeam()


def _own(tool) -> bool:
    return type(tool).__name__ != "FinalAnswerTool" and getattr(tool, "name", None) != "final_answer"


def _arguments(tool, args: tuple, kwargs: dict) -> dict:
    """The call's arguments by input name, as `Tool.__call__` itself reads them (one dict of inputs, or
    positional arguments in the order of `inputs`)."""
    inputs = list(getattr(tool, "inputs", None) or {})
    if len(args) == 1 and not kwargs and isinstance(args[0], dict) and all(k in inputs for k in args[0]):
        return dict(args[0])
    named = dict(zip(inputs, args))
    if len(args) > len(inputs):
        named["args"] = list(args[len(inputs):])
    return {**named, **kwargs}


def patch(module):
    """`smolagents.tools`, right after it ran (no `@tool` class exists yet)."""
    cls = module.Tool
    if getattr(cls.__call__, "__chaos_gate__", False):
        return None
    call = cls.__call__

    @functools.wraps(call)
    def __call__(self, *args, sanitize_inputs_outputs: bool = False, **kwargs):
        def run():
            return call(self, *args, sanitize_inputs_outputs=sanitize_inputs_outputs, **kwargs)

        if not _own(self):
            return run()
        return call_sync(SEAM, str(self.name), _arguments(self, args, kwargs), run)

    __call__.__chaos_gate__ = True
    cls.__call__ = __call__
    return "smolagents.Tool.__call__"
