"""The plugin's fixtures, all named `chaos_*` so none can take the place of a team's own.

`chaos_run` is the run (env values set for the agent's clients, worlds, clock, trace; `conversation(...)`,
a conversation input: conversation.py);
`chaos_run_index` its index, parametrized by `chaos_runs(N)`; `chaos_sim`, `chaos_world`,
`chaos_clock` and `chaos_trace` are parts of it. Short names (`world`, `sim`, ...) are
opt-in aliases (aliases.py). The spec a run plays is built from the test's markers once,
before setup when the check ran (protocol.py), so a bad config fails the test there; built
here otherwise, with the error reported outside the `except` so it prints once.
"""

from __future__ import annotations

import pytest

GROUPS = pytest.StashKey[dict]()
PROXIES = pytest.StashKey[dict]()
RUN = pytest.StashKey[tuple]()
SPEC = pytest.StashKey[object]()


def _arg(node, name: str, default=None):
    marker = node.get_closest_marker(name)
    return marker.args[0] if marker is not None and marker.args else default


def _sim_arg(node):
    marker = node.get_closest_marker("chaos_sim")
    if marker is None:
        return None
    first = marker.args[0] if marker.args else None
    if isinstance(first, (str, bytes)) or hasattr(first, "__fspath__"):
        return first
    sim = dict(marker.kwargs)
    if first is not None:
        sim["rules"] = first
    return sim


def _faults_arg(node):
    marker = node.get_closest_marker("chaos_faults")
    if marker is None:
        return None
    one = len(marker.args) == 1 and isinstance(marker.args[0], (list, tuple))
    return list(marker.args[0]) if one else list(marker.args)


def build(item):
    """The RunSpec the item's markers describe; raises SpecError or ConfigError with the reason."""
    from gate.testing.spec import build_spec, input_name

    worlds = [(m.args[0], dict(m.kwargs)) for m in reversed(list(item.iter_markers("chaos_world"))) if m.args]
    seed = item.config.getoption("chaos_seed")
    input_id = _arg(item, "chaos_input") or input_name(getattr(item, "originalname", item.name))
    return build_spec(base_dir=item.path.parent, config=_arg(item, "chaos_config"), worlds=worlds,
                      sim=_sim_arg(item), faults=_faults_arg(item), scenario=_arg(item, "chaos_scenario"),
                      input_id=input_id, seed=seed if seed is not None else _arg(item, "chaos_seed"))


def spec_or_problem(item):
    """(spec, None), or (None, one line naming the test and what is wrong): never an exception."""
    from gate.errors import ConfigError
    from gate.testing.spec import SpecError

    try:
        return build(item), None
    except (SpecError, ConfigError) as exc:
        return None, f"{str(exc).strip()} (on {item.nodeid})"


@pytest.fixture
def chaos_run_index(request) -> int:
    """This run's index (0-based): parametrized run0..runN-1 under chaos_runs(N)."""
    return getattr(request, "param", 0)


@pytest.fixture
def chaos_run(request, chaos_run_index, monkeypatch):
    """The gate's proxy for this run, with the agent's base-URL env values set for the test's duration."""
    from gate.pytest_plugin.conversation import Conversations
    from gate.testing.proxy import ChaosProxy

    spec = request.node.stash.get(SPEC, None)
    if spec is None:
        spec, problem = spec_or_problem(request.node)
        if problem:
            pytest.fail(problem, pytrace=False)
    proxies = request.config.stash[PROXIES]
    key = spec.key()
    if key not in proxies:
        proxies[key] = ChaosProxy(spec.config, spec.forced)
    run = proxies[key].begin(spec.cell(), chaos_run_index)
    run.conversation = Conversations(run, spec)  # chaos_run.conversation([...turns...], history=...)
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
def chaos_sim(chaos_run) -> SimHandle:
    """The scripted model of this run: `rule(...)`, `rules`, `url()`."""
    return SimHandle(chaos_run)


@pytest.fixture
def chaos_world(chaos_run):
    """The (first) live world of this run: `.orders.get/where/pick/insert/update`, `snapshot()`, `diff()`."""
    try:
        return chaos_run.world()
    except LookupError as exc:
        problem = str(exc)
    pytest.fail(f"chaos-gate: {problem}", pytrace=False)


@pytest.fixture
def chaos_clock(chaos_run):
    """The run's world clock: `now()`, `advance(seconds | timedelta, hours=...)`, `set(datetime)`."""
    return chaos_run.clock


@pytest.fixture
def chaos_trace(chaos_run):
    """The run's calls: `count(tool=...)`, `calls_to(tool)`, `faults()`, `failures()`, `summary()`."""
    return chaos_run.trace
