"""Fake tool worlds: stateful services declared in YAML, served by the gate over HTTP and MCP."""
