"""chaos-gate's pytest plugin: chaos tests inside the team's own test suite (docs/pytest.md).

Registered by the package (`pytest11` entry point): installing agent-chaos-gate is all
the configuration there is. Markers (all `chaos_…`, so faultbench's can sit beside them):

    chaos_config(FILE)          a chaos-gate.yaml: its llm upstreams, tools, worlds, sim, scenarios, seed
    chaos_world(FILE | dict, faults=None|True|{...}, name=...)   a world (gate or faultbench format)
    chaos_sim(rules=[...], default=..., ...) | chaos_sim(FILE)    the scripted model's rules
    chaos_scenario(NAME) | chaos_faults(*faults)                 what to inject (the config's or inline)
    chaos_seed(N)  chaos_input(ID)  chaos_runs(N)  chaos_min_pass_rate(R)

Fixtures: `chaos` (the run: env values already set for the agent's clients, `url()`,
`world()`, `clock`, `trace`, `fresh()`), `sim`, `chaos_world`, `chaos_clock`, `chaos_trace`,
`chaos_run` — and `world`, `clock`, `trace` for short unless faultbench is loaded (it owns
those names). Options: `--chaos-seed N`, `--chaos-runs N`. Nothing here runs, and nothing
heavy is imported, for a test that uses none of it.
"""

from __future__ import annotations

import inspect

import pytest

from gate.pytest_plugin import runs

MARKERS = {
    "chaos_config": "chaos_config(path): a chaos-gate.yaml (relative to the test file) the chaos fixtures use",
    "chaos_world": "chaos_world(path_or_dict, faults=None, name=None): a world served to this test",
    "chaos_sim": "chaos_sim(rules=None, path=None, **sim): the scripted model's rules for this test",
    "chaos_scenario": "chaos_scenario(name): a scenario (or profile) of the config whose faults apply",
    "chaos_faults": "chaos_faults(*faults): gate faults applied to this test's calls (cell chaos/<input>/custom)",
    "chaos_seed": "chaos_seed(n): the root seed (default: the config's, else 0; --chaos-seed overrides)",
    "chaos_input": "chaos_input(id): the input id that names this test's cell (default: the test's name)",
    "chaos_runs": "chaos_runs(n): run this test n times, run k under the schedule of (seed, cell, k)",
    "chaos_min_pass_rate": "chaos_min_pass_rate(r): pass when at least r of the runs pass",
}
GROUPS = pytest.StashKey[dict]()
PROXIES = pytest.StashKey[dict]()
RUN = pytest.StashKey[tuple]()


def pytest_addoption(parser) -> None:
    group = parser.getgroup("chaos-gate")
    group.addoption("--chaos-seed", type=int, default=None, help="root seed for every chaos test (overrides chaos_seed)")
    group.addoption("--chaos-runs", type=int, default=None, help="runs of every chaos test (overrides chaos_runs)")


def pytest_configure(config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", text)
    config.stash[GROUPS] = {}
    config.stash[PROXIES] = {}
    if not config.pluginmanager.hasplugin("faultbench"):
        from gate.pytest_plugin import aliases

        config.pluginmanager.register(aliases, "chaos-gate-aliases")


def pytest_unconfigure(config) -> None:
    for proxy in config.stash.get(PROXIES, {}).values():
        try:
            proxy.close()
        except Exception:
            pass


def pytest_generate_tests(metafunc) -> None:
    if "chaos_run" not in metafunc.fixturenames:
        return
    n = runs.runs_of(metafunc.config, metafunc.definition)
    if n > 1:
        metafunc.parametrize("chaos_run", range(n), indirect=True, ids=[f"run{i}" for i in range(n)])


def _arg(node, name: str, default=None):
    marker = node.get_closest_marker(name)
    return marker.args[0] if marker is not None and marker.args else default


def _spec(request):
    from gate.testing.spec import build_spec, input_name

    node, base = request.node, request.path.parent
    worlds = [(m.args[0], dict(m.kwargs)) for m in reversed(list(node.iter_markers("chaos_world"))) if m.args]
    sim = None
    marker = node.get_closest_marker("chaos_sim")
    if marker is not None:
        first = marker.args[0] if marker.args else None
        if isinstance(first, (str, bytes)) or hasattr(first, "__fspath__"):
            sim = first
        else:
            sim = dict(marker.kwargs)
            if first is not None:
                sim["rules"] = first
    faults = None
    marker = node.get_closest_marker("chaos_faults")
    if marker is not None:
        faults = list(marker.args[0]) if len(marker.args) == 1 and isinstance(marker.args[0], (list, tuple)) \
            else list(marker.args)
    seed = request.config.getoption("chaos_seed")
    return build_spec(base_dir=base, config=_arg(node, "chaos_config"), worlds=worlds, sim=sim, faults=faults,
                      scenario=_arg(node, "chaos_scenario"), input_id=_arg(node, "chaos_input") or input_name(
                          getattr(node, "originalname", node.name)),
                      seed=seed if seed is not None else _arg(node, "chaos_seed"))


@pytest.fixture
def chaos_run(request) -> int:
    """This run's index (0-based): parametrized run0..runN-1 under chaos_runs(N)."""
    return getattr(request, "param", 0)


@pytest.fixture
def chaos(request, chaos_run, monkeypatch):
    """The gate's proxy for this run, with the agent's base-URL env values set for the test's duration."""
    from gate.errors import ConfigError
    from gate.testing.proxy import ChaosProxy
    from gate.testing.spec import SpecError

    try:
        spec = _spec(request)
    except (SpecError, ConfigError) as exc:
        pytest.fail(f"chaos-gate: {exc}", pytrace=False)
    proxies = request.config.stash[PROXIES]
    key = spec.key()
    if key not in proxies:
        proxies[key] = ChaosProxy(spec.config, spec.forced)
    run = proxies[key].begin(spec.cell(), chaos_run)
    request.node.stash[RUN] = (spec, run)
    for name, value in run.env.items():
        monkeypatch.setenv(name, value)
    yield run
    run.end()


class SimHandle:
    """The scripted model of this run: add rules, read its config, find its URLs."""

    def __init__(self, run):
        self._run = run

    @property
    def config(self):
        return self._run.sim.spec

    @property
    def rules(self) -> list:
        return self.config.rules

    def rule(self, when: str, **script):
        """Add a rule, checked first (this run only): `sim.rule("refund", tool="issue_refund", answer="Done.")`."""
        from gate.config.sim import SimRule

        rule = SimRule.model_validate({"when": when, **script})
        self.config.rules.insert(0, rule)
        return rule

    @property
    def env(self) -> dict[str, str]:
        return {k: v for k, v in self._run.env.items() if k.endswith("_BASE_URL")}

    def url(self, provider: str = "openai") -> str:
        return self._run.url(provider)


@pytest.fixture
def sim(chaos) -> SimHandle:
    return SimHandle(chaos)


@pytest.fixture
def chaos_world(chaos):
    """The (first) live world of this run: `.orders.get/where/pick/insert/update`, `snapshot()`, `diff()`."""
    try:
        return chaos.world()
    except LookupError as exc:
        pytest.fail(f"chaos-gate: {exc}", pytrace=False)


@pytest.fixture
def chaos_clock(chaos):
    """The run's world clock: `now()`, `advance(seconds | timedelta, hours=...)`, `set(datetime)`."""
    return chaos.clock


@pytest.fixture
def chaos_trace(chaos):
    """The run's calls: `count(tool=...)`, `calls_to(tool)`, `faults()`, `failures()`, `summary()`."""
    return chaos.trace


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    entry = item.stash.get(RUN, None)
    if entry is not None and report.when == "call":
        runs.record(item, report, item.config.stash[GROUPS], entry)
    shapes = getattr(getattr(item, "obj", None), "chaos_shapes", None)
    if shapes is not None and report.when == "call" and report.failed:
        from gate.testing.shapes import FAILED, pin

        key, corpus = shapes
        failed = FAILED.pop(key, None)
        if failed is not None:
            added = pin(corpus, key, *failed)
            report.sections.append(("chaos-gate", f"{'pinned' if added else 'already pinned'}: {failed[0]!r} in "
                                                   f"{corpus.name}: it runs first from now on"))


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    runs.summary(terminalreporter, config.stash.get(GROUPS, {}))


def pytest_sessionfinish(session, exitstatus) -> None:
    if runs.short_of_rate(session.config.stash.get(GROUPS, {})):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """Async chaos tests run without an async plugin: each on its own event loop (the proxy has its own)."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj) or "chaos" not in pyfuncitem.fixturenames:
        return None
    if any(pyfuncitem.get_closest_marker(m) for m in ("asyncio", "anyio", "trio")):
        return None
    import asyncio

    names = pyfuncitem._fixtureinfo.argnames
    asyncio.run(pyfuncitem.obj(**{name: pyfuncitem.funcargs[name] for name in names}))
    return True
