"""The framework seams: module name -> patch(module) -> the seam's name (or None).

One module per framework. A patch runs right after its module's own code, wraps the
one function through which that framework invokes a tool, and returns the seam's
name for the report ("what the gate reached"). A patch imports nothing the agent did
not import itself. Adding a framework is one module here and one line below.
"""

from __future__ import annotations

from chaos_gate_agent.seams import mcp_client
from chaos_gate_agent.seams import openai_agents, pydantic_ai
from chaos_gate_agent.seams import anthropic_tools, google_genai, langchain

SEAMS = {
    "mcp.client.stdio": mcp_client.patch_stdio,
    "mcp.client.session": mcp_client.patch_session,
    "agents.tool": openai_agents.patch,
    "pydantic_ai.toolsets.function": pydantic_ai.patch,
    "langchain_core.tools.base": langchain.patch,
    "google.genai._extra_utils": google_genai.patch,
    "anthropic.lib.tools._beta_functions": anthropic_tools.patch,
}
