"""The framework seams: module name -> patch(module) -> the seam's name (or None).

One module per framework. A patch runs right after its module's own code, wraps the
one function through which that framework invokes a tool, and returns the seam's
name for the report ("what the gate reached"). A patch imports nothing the agent did
not import itself. Adding a framework is one module here and one line below; the
registry names the patches as strings, so an agent that imports no framework loads none of them.
"""

from __future__ import annotations

SEAMS = {  # module the agent imports -> "seam module:patch function", imported only once that module loads
    "mcp.client.stdio": "mcp_client:patch_stdio",
    "mcp.client.session": "mcp_client:patch_session",
    "agents.tool": "openai_agents:patch",
    "agents.handoffs": "openai_agents:patch_handoffs",  # handoffs taken: reported, never faulted
    "pydantic_ai.toolsets.function": "pydantic_ai:patch",
    "langchain_core.tools.base": "langchain:patch",
    "google.genai._extra_utils": "google_genai:patch",
    "anthropic.lib.tools._beta_functions": "anthropic_tools:patch",
    "crewai.tools.base_tool": "crewai:patch",
    "agno.tools.function": "agno:patch",
    "google.adk.tools.function_tool": "google_adk:patch",
    "llama_index.core.tools.function_tool": "llama_index:patch",
    "strands.tools.decorator": "strands:patch",
    "dspy.adapters.types.tool": "dspy_tools:patch",
    "smolagents.tools": "smolagents_tools:patch",
}


def resolve(spec: str):
    """The patch function a SEAMS value names. Seam modules import asyncio and http.client, about
    70 ms of every agent start if done up front; here they load with the framework they patch."""
    import importlib

    module, _, function = spec.partition(":")
    return getattr(importlib.import_module(f"chaos_gate_agent.seams.{module}"), function)
