"""google-genai automatic function calling: the Python functions the SDK calls itself.

With `config.tools=[fn]`, `generate_content` (and chats, sync and async) finds the
model's function calls, converts their arguments to the function's annotations and
calls `_extra_utils.invoke_function_from_dict_args` (or its `_async` twin; a sync
function under the async client goes there on a thread). That function is the seam:
it is patched to hand the SDK an instrumented wrapper of `fn`, so the SDK's own code
still converts the arguments and still catches what the function raises.

That catch is the SDK's whole tool-error path: any exception becomes
FunctionInvocationError("Failed to invoke function <name> with converted arguments
... because of error <str(e)>"), which `get_function_response_parts` sends back to
the model as the function response `{"error": "<that text>"}`. Nothing is raised to
the caller and nothing is logged; the exception's type survives only in its message
if the message says it. An injected failure raises inside the wrapper, so it takes
exactly that path. A value fault acts on what `fn` returned, before the SDK wraps
it as `{"result": value}`.

The function the SDK declares to the model is the one in `tools`, untouched (the
wrapper exists only for the call), so the declaration is byte-identical. The module
reads the wrappers by their global names, so replacing them in the module suffices.
"""

from __future__ import annotations

import functools

from chaos_gate_agent.call import Seam, wrap_function


class GenAiSeam(Seam):
    framework = "google-genai"


SEAM = GenAiSeam()


def _instrumented(fn):
    if getattr(fn, "__chaos_gate__", False) or not callable(fn):
        return fn
    return wrap_function(fn, str(getattr(fn, "__name__", None) or type(fn).__name__), SEAM)


def patch(module):
    """`module` is google.genai._extra_utils."""
    invoke, invoke_async = module.invoke_function_from_dict_args, module.invoke_function_from_dict_args_async
    if getattr(invoke, "__chaos_gate__", False):
        return None

    @functools.wraps(invoke)
    def invoke_function_from_dict_args(args, function_to_invoke):
        return invoke(args, _instrumented(function_to_invoke))

    @functools.wraps(invoke_async)
    async def invoke_function_from_dict_args_async(args, function_to_invoke):
        return await invoke_async(args, _instrumented(function_to_invoke))

    invoke_function_from_dict_args.__chaos_gate__ = True
    invoke_function_from_dict_args_async.__chaos_gate__ = True
    module.invoke_function_from_dict_args = invoke_function_from_dict_args
    module.invoke_function_from_dict_args_async = invoke_function_from_dict_args_async
    return "google.genai.invoke_function_from_dict_args"
