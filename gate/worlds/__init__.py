"""Fake tool worlds: stateful services declared in YAML (or faultbench world files), served by the gate.

model (the world format) · checks (load-time checks, custom operations imported) · files (world
files, faultbench references) · faultbench (faultbench's format read as it is) · values (what a
write may store) · state (one run's tables) · table (the world/table API) · custom (custom
operations' contract) · clock (fake time) · faults (faultbench's fault vocabulary) · serve (REST
and MCP behind the proxy). The pytest side is gate/pytest_plugin; standalone serving gate/testing.
"""
