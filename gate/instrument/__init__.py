"""In-process reach: the tools that never cross the wire, faulted and traced from inside the agent's process.

Function tools of the Python and Node frameworks, MCP servers over stdio and command-line
tools are reached through the agent's environment alone (DESIGN-reach), never its code:

    environment.py  PYTHONPATH, NODE_OPTIONS and PATH set for the agent's process
    python/         the bootstrap the agent's Python loads first (sitecustomize, the seams)
    node/           the hook the agent's Node requires first (its seams, Node `kind: function`)
    frameworks.py   the table of every seam, for the docs and the reach line
    commands.py     the PATH shims of `kind: command` tools
    calls.py        the proxy's `/fn/` endpoints the seams ask, one exchange per call
    exchange.py     an in-process call as an Exchange, so every fault acts on it as on the wire
    clock.py        the agent's own clock rate under `agent.time_scale`

This file holds only this docstring (the package was a namespace package; nothing imports it
for its content): the README's Layout table is generated from it (scripts/doc_tables.py).
"""
