"""Exploration inside a team's own test: the test is the baseline, and each fault point re-runs it.

Filibuster's shape, on the gate's planner: a chaos test that passes fault-free is a functional test
of the agent, so its calls are the call sites. `@pytest.mark.chaos_explore(...)` (or the ini
`chaos_explore = auto`, for every chaos test whose config names no fault, as `chaos-gate run`
explores) runs the test once as written; then reads the sites off that run's trace, plans the
fault points with the same planner and seed as `chaos-gate run` (gate/explore/planner.py), and
calls the test function again once per point, on a fresh run of the same proxy with the point's
faults — the same cell id, seed and faults that `chaos-gate run` gives the same config, so both
plan the same points and judge them alike.

Each point is judged by the universal oracles (gate/contracts/universal.py), on the point's run:

- an exception the test did not raise fault-free (the agent's call raised) is a crash: `survives`;
- the test's own assertion failing under a fault is the outcome changing: a breach of
  `tolerates_transient` when the fault was a transient one, and not judged otherwise (a test
  asserts what the fault-free run does; an honest failure under an outage is not a bug);
- a run slower than the config's `agent.timeout` is a hang: `answers_in_time`;
- the trace judges writes, retries and injected orders; the answer, when the test hands it over
  (`chaos_run.answer = reply`), judges claims and cut answers.

Fixtures are the test's own for the whole exploration, as hypothesis keeps them across examples;
only the gate's (`chaos_run`, `chaos_trace`, `chaos_sim`, `chaos_world`, `chaos_clock` and their
aliases) are rebound to each point's run. The findings fail the test, one line each, with the marker
that pins the point and the `chaos-gate run` command that replays it.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
import traceback
from dataclasses import dataclass, field

import pytest

from gate.pytest_plugin.fixtures import RUN, SimHandle
from gate.testing.shown import shown

INI = "chaos_explore"
PAYLOAD = "chaos-gate-explore"
JUDGED_ELSEWHERE = ("recovers", "understands_rewording")  # across cells, and on mutation cells


@dataclass
class Outcome:
    """One point's run of the test, as the oracles judge it."""

    point: object
    breaches: list[tuple[str, str, str]] = field(default_factory=list)  # (oracle, severity, message)


def spec_of(item, config):
    """The ExploreConfig this test explores with, or None."""
    from gate.config.explore import ExploreConfig
    from gate.plan.oracles import explore_spec

    marker = item.get_closest_marker("chaos_explore")
    if marker is not None:
        return ExploreConfig.model_validate(dict(marker.kwargs))
    explicit = config.chaos.explore
    if explicit is False:
        return None
    if explicit is not None or item.config.getini(INI) == "auto":
        return explore_spec(config)
    return None


def wanted(item) -> bool:
    entry = item.stash.get(RUN, None)
    return entry is not None and spec_of(item, entry[0].config) is not None


def run(item) -> None:
    """The baseline (the test as written), then every planned point; fails the test with the findings."""
    from gate.explore.planner import Baseline, plan_points

    spec, base_run = item.stash[RUN]
    explore = spec_of(item, spec.config)
    _call(item, item.funcargs)  # the fault-free run: its failure is the test's, as without exploration
    baseline = Baseline.read(spec.input_id, base_run.answer, "ok", list(base_run.state.trace))
    deadline = spec.config.agent.timeout
    plan = plan_points([baseline], explore, spec.root_seed, deadline=deadline)
    oracles = _oracles(spec.config, explore)
    originals, current, outcomes = dict(item.funcargs), base_run, []
    try:
        for point in plan.points:
            current = _switch(item, current, _cell(spec, point))
            outcomes.append(_judge(item, current, point, oracles, deadline))
    finally:
        _restore(item, originals, current, base_run)
    _record(item, plan, outcomes)
    failed = [o for o in outcomes if o.breaches]
    if failed:
        first = failed[0]  # what the pass-rate summary says of this run (runs.py)
        base_run.explored_line = f"{len(failed)} of {len(outcomes)} explored fault point(s) failed, first " \
                                 f"{first.point.id} ({first.breaches[0][0]})"
        head = f"chaos-gate explore: {len(failed)} of {len(outcomes)} fault point(s) failed"
        pytest.fail(shown("\n\n".join([head, *(_finding(item, spec, o) for o in failed)])), pytrace=False)


def _call(item, funcargs) -> None:
    names = item._fixtureinfo.argnames
    result = item.obj(**{name: funcargs[name] for name in names})
    if inspect.iscoroutine(result):
        asyncio.run(result)


def _oracles(config, explore) -> list:
    from gate.plan.oracles import oracles

    from gate.contracts.universal import BASELINE_ORACLE

    # every oracle of an explored point: the baseline's own (`baseline_answers`) judges the test's first run,
    # which the test itself already judges (it ran, passing, before any point)
    return [o for o in oracles(config, explore) if o.type not in JUDGED_ELSEWHERE and o.id != BASELINE_ORACLE]


def _judge(item, inner, point, oracles, deadline: float) -> Outcome:
    """Call the test on the point's run, and judge that run by every oracle."""
    from gate.contracts.base import Observation

    began = time.monotonic()
    reason, detail = "ok", ""
    try:
        _call(item, item.funcargs)
    except AssertionError as exc:
        reason, detail = "assertion_failed", f"the test's own assertion failed: {str(exc).strip()[:300]}"
    except Exception as exc:  # the agent's call raised where the fault-free run did not
        reason, detail = "agent_crash", "".join(traceback.format_exception(exc))[-2000:]
    elapsed = time.monotonic() - began
    trace = list(inner.state.trace)
    if elapsed > deadline and reason != "agent_crash":
        reason = "agent_timeout"
    obs = Observation(output=inner.answer, reason=reason, latency_ms=elapsed * 1000,
                      trace=trace, reference=point.reference, detail=detail)
    outcome = Outcome(point)
    for oracle in oracles:
        verdict = oracle.check(obs)
        if not verdict.passed:
            outcome.breaches.append((oracle.id, oracle.severity, verdict.message))
    if reason == "assertion_failed" and point.reference.transient and not outcome.breaches:
        outcome.breaches.append(("tolerates_transient", "high", f"one transient {point.reference.fault}: {detail}"))
    return outcome


def _cell(spec, point):
    from pydantic import TypeAdapter

    from gate.config.chaos import Fault
    from gate.plan.oracles import SCENARIO
    from gate.plan.seeds import derive_seed
    from gate.testing.spec import PluginCell

    adapter = TypeAdapter(Fault)
    return PluginCell(point.id, derive_seed(spec.root_seed, point.id),
                      tuple(adapter.validate_python(f) for f in point.faults), SCENARIO, "chaos", point.input_id)


def _switch(item, current, cell):
    """A fresh run of `cell` on the same proxy, with the gate's fixtures of the test rebound to it."""
    from gate.worlds.table import WorldView

    current.end()
    inner = current.proxy.begin(cell, current.run)
    if hasattr(current, "conversation"):  # chaos_run.conversation(...) runs on the point's run too
        inner.conversation = type(current.conversation)(inner, current.conversation.spec)
    swaps = {id(current): inner, id(current.trace): inner.trace, id(current.clock): inner.clock}
    for name, value in list(item.funcargs.items()):
        if id(value) in swaps:
            item.funcargs[name] = swaps[id(value)]
        elif isinstance(value, SimHandle):
            item.funcargs[name] = SimHandle(inner)
        elif isinstance(value, WorldView):
            item.funcargs[name] = inner.world(value.name)
    return inner


def _restore(item, originals: dict, last, base_run) -> None:
    """The test's own fixture values back, on a fresh run of its own cell that their teardown ends."""
    last.end()
    fresh = base_run.proxy.begin(base_run.cell, base_run.run)
    base_run.__dict__.update(fresh.__dict__)
    base_run.answer = None
    item.funcargs.clear()
    item.funcargs.update(originals)


def _record(item, plan, outcomes: list[Outcome]) -> None:
    """The plan and findings on the report (JUnit properties carry them to a matrix's merge)."""
    doc = {"sites": plan.sites, "planned": plan.planned, "run": len(plan.points), "pruned": dict(plan.pruned),
           "points": [o.point.id for o in outcomes],
           "findings": [{"cell": o.point.id, "invariants": sorted({b[0] for b in o.breaches})}
                        for o in outcomes if o.breaches]}
    item.user_properties.append((PAYLOAD, json.dumps(doc)))
    item.add_report_section("call", "chaos-gate explore",
                            f"{plan.sites} call site(s), {len(outcomes)} fault point(s) run of {plan.planned} "
                            f"planned, {len(doc['findings'])} failed")


def _finding(item, spec, outcome: Outcome) -> str:
    from gate.explore.findings import tell

    oracle, severity, message = outcome.breaches[0]
    point = outcome.point
    faults = ", ".join(json.dumps(f, sort_keys=False) for f in point.faults)
    lines = [f"[{severity}] {oracle}: {tell(point, message)}",
             f"  pin it: @pytest.mark.chaos_faults({faults})"]
    if spec.config_path is not None and any(i.id == spec.input_id for i in spec.config.inputs):
        lines.append(f"  replay: chaos-gate run -c {spec.config_path.name} --only {point.id} --seed {spec.root_seed}")
    return "\n".join(lines)
