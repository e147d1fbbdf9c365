"""Fake tool worlds: stateful services declared in YAML (or faultbench world files), served by the gate.

model (the world format) · checks (load-time checks, custom operations imported) · faultbench
(faultbench's format read as it is) · values (what a write may store) · state (one run's tables) ·
table (the world/table API) · custom (custom operations' contract) · errors · clock (fake time) ·
faults (faultbench's fault vocabulary). World files are read by gate/config/world_files.py (the
layer that reads YAML); REST and MCP behind the proxy is gate/proxy/world_upstream.py. The pytest
side is gate/pytest_plugin; standalone serving gate/testing.
"""
