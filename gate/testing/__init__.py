"""Chaos tests in a team's own test suite: the gate's proxy, sim and worlds for in-process agent code.

`gate.pytest_plugin` is the pytest face of it (registered by the package, no configuration
needed; docs/pytest.md); this package is what it is built from, usable without pytest:

- `spec.build_spec(...)` — the config and cell a test runs (named and seeded as `chaos-gate run` would);
- `proxy.ChaosProxy(config).begin(cell, run)` — a running proxy and one run: env values, worlds, clock, trace;
- `trace.Trace` — the run's calls: `count(tool=...)`, `calls_to`, `faults()`, `failures()`, `summary()`;
- `shapes` — hypothesis strategies of valid-but-wrong-shaped LLM answers per dialect, with pinned regressions;
- `standalone` — `chaos-gate sim serve` and `chaos-gate world serve`.
"""
