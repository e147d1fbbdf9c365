"""One verdict however pytest runs it: docs/pytest.md's failing example (15 of 20 runs pass, min 95%)
under `-n 0`, `-n 2`, `-n auto`, `--reruns 1` and `-p randomly`, with the real plugins autoloaded.

The five runs start at once (each in its own copy of the suite; the machine has two cores, and
each run is mostly start-up and waiting on its proxy) and are compared: exit code, counts, the
plugin's summary lines, and the faults every run met (a conftest writes each run's trace). The
`-n 0` run is the one read line by line at COLUMNS=80, writes the JUnit file, and leaves the
last-failed cache that `--lf` replays; a printed replay command is run and must fail.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml, Properties

from test_docs_pytest import examples

pytestmark = pytest.mark.timeout(900)  # the module's five runs start in the first test's setup
MODES = {"n0": ["-n", "0", "--junitxml=junit.xml", "-p", "no:randomly"],
         "n2": ["-n", "2", "-p", "no:randomly"],
         "auto": ["-n", "auto", "-p", "no:randomly"],
         "reruns": ["--reruns", "1", "-p", "no:randomly"],
         "randomly": ["-p", "randomly", "--randomly-seed", "1234"]}
RECORDER = '''
import json, os
import pytest
from gate.pytest_plugin.fixtures import RUN


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    yield
    entry = item.stash.get(RUN, None)
    if entry is not None and call.when == "call":
        with open(f"runs-{os.getpid()}.jsonl", "a") as f:
            f.write(json.dumps([entry[1].run, entry[1].trace.summary()]) + "\\n")
'''
# the inner runs are a user's pytest: nothing of the outer one (its addopts, or the xdist worker
# variables when this suite itself runs under -n, which make pytest-benchmark warn) leaks in
ENV = {**{k: v for k, v in os.environ.items()
          if k not in ("CI", "PYTEST_ADDOPTS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD") and not k.startswith("PYTEST_XDIST_")},
       "COLUMNS": "80"}


def _suite(root: Path) -> Path:
    root.mkdir()
    for name, text in examples().items():
        if name != "output":
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text + "\n", encoding="utf-8")
    (root / "conftest.py").write_text(RECORDER)
    return root


def _pytest(cwd: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pytest", "-q", *args], cwd=cwd, env=ENV, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _done(proc: subprocess.Popen) -> tuple[int, list[str]]:
    out, _ = proc.communicate(timeout=600)
    return proc.returncode, out.splitlines()


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    base = tmp_path_factory.mktemp("scale")
    dirs = {mode: _suite(base / mode) for mode in MODES}
    procs = {mode: _pytest(dirs[mode], *args) for mode, args in MODES.items()}
    return {mode: (*_done(proc), dirs[mode]) for mode, proc in procs.items()}


def section(lines: list[str]) -> list[str]:
    """The plugin's summary: from its separator to the next one."""
    start = next(i for i, line in enumerate(lines) if "chaos-gate: pass rate over runs" in line)
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("=="))
    return lines[start + 1:end]


def notes_apart(lines: list[str]) -> tuple[list[str], list[str]]:
    """The summary's test lines, and its closing notes (`chaos-gate: ...`, such as the one about reruns)."""
    cut = next((i for i, line in enumerate(lines) if line.startswith("chaos-gate: ")), len(lines))
    return lines[:cut], lines[cut:]


def traces(root: Path) -> dict[int, str]:
    seen = [json.loads(line) for f in root.glob("runs-*.jsonl") for line in f.read_text().splitlines()]
    return dict(sorted(seen))


def counts(lines: list[str]) -> str:
    """pytest's closing counts ("1 failed, 19 passed"), without the time."""
    last = next(line for line in reversed(lines) if re.search(r"\d+ (failed|passed)", line))
    return re.sub(r" in [\d.]+s.*$", "", last.strip("= "))


def test_every_mode_gives_the_verdict_of_n0(ran):
    code, lines, root = ran["n0"]
    reference = section(lines)
    assert code == 1 and counts(lines) == "1 failed, 19 passed"
    assert reference[:2] == ["test_refunds.py::test_refund_is_issued_once",
                             "  FAIL 75% < 95%: 5 runs failed (15 of 20 passed)"]
    assert len(traces(root)) == 20
    for mode in ("n2", "auto", "reruns", "randomly"):
        code, lines, where = ran[mode]
        mine = notes_apart(section(lines))[0]
        assert (code, counts(lines), mine) == (1, "1 failed, 19 passed", reference), (mode, "\n".join(lines[-40:]))
        assert traces(where) == traces(root), mode  # the same faults on the same runs, whichever worker ran them
        summary = [line for line in lines if line.startswith("FAILED ")]
        assert len(summary) == 1 and re.fullmatch(
            r"FAILED test_refunds\.py::test_refund_is_issued_once\[run\d+\] - 75% < 95%: 5 runs.*", summary[0])
    for mode in ("n2", "auto"):  # the runs really were spread: the recorder wrote from two worker processes
        assert len(list(ran[mode][2].glob("runs-*.jsonl"))) == 2, mode
    _, lines, _ = ran["reruns"]
    assert notes_apart(section(lines))[1][0].startswith("chaos-gate: --reruns leaves chaos tests alone")
    assert not any("rerun" in line for line in lines[-1:])  # no attempt was rerun


def test_every_line_fits_80_columns_or_is_a_whole_command(ran):
    _, lines, _ = ran["n0"]
    copied = False  # the test's own failure, copied into a section as pytest rendered it
    for line in lines:
        if line.startswith("---") or line.startswith("==="):
            copied = "counted in the pass rate" in line
            assert len(line) <= 80, line
            continue
        if copied or len(line) <= 80:
            continue
        argv = shlex.split(line)
        assert argv[:3] == ["python", "-m", "pytest"] or argv[:2] == ["chaos-gate", "run"], line
    commands = [line.strip() for line in section(lines) if line.strip().startswith("python -m pytest ")]
    assert len(commands) == 5 and all(shlex.split(c)[3].endswith("]") for c in commands)


def test_junit_carries_traces_replays_and_the_rate(ran):
    _, lines, root = ran["n0"]
    cases = {case.name: case for suite in JUnitXml.fromfile(str(root / "junit.xml")) for case in suite}
    props = {name: [(p.name, p.value) for p in (case.child(Properties) or [])] for name, case in cases.items()}
    failing = [name for name, found in props.items() if any(k == "chaos_trace" for k, _ in found)]
    assert len(failing) == 5
    for name in failing:
        trace = dict(props[name])["chaos_trace"]
        assert trace.startswith(name.split("[")[1][:-1] + ": get_order → refund_order!timeout_after_write")
        assert dict(props[name])["chaos_replay"] == f"python -m pytest 'test_refunds.py::{name}'"
    [rated] = [name for name, found in props.items() if any(k == "chaos_pass_rate" for k, _ in found)]
    assert dict(props[rated])["chaos_pass_rate"] == "FAIL 75% < 95%: 5 runs failed (15 of 20 passed)"
    [failure] = [r for r in cases[rated].result if isinstance(r, Failure)]
    assert (failure.text or "").startswith("75% < 95%: 5 runs failed")
    assert all(k != "chaos-gate" for found in props.values() for k, _ in found)  # the payload never reaches it


def test_a_replay_command_fails_and_lf_replays_the_failing_runs(ran):
    _, lines, root = ran["n0"]
    command = next(line.strip() for line in section(lines) if line.strip().startswith("python -m pytest "))
    name = re.search(r"\[(run\d+)\]", command).group(1)
    replay = _pytest(root, *shlex.split(command)[3:], "-p", "no:randomly", "-p", "no:cacheprovider")
    last = _pytest(root, "--lf", "-p", "no:randomly")
    code, out = _done(replay)
    text = "\n".join(out)
    assert code == 1 and out[0].startswith("F") and counts(out) == "1 failed", text
    assert "assert 2 == 1" in text and f"  {name} failed: get_order → refund_order!timeout_after_write" in text
    assert "over 1 of the 20 runs chaos_runs asks for" in text
    assert f"FAILED test_refunds.py::test_refund_is_issued_once[{name}] - AssertionError" in text
    code, out = _done(last)
    assert code == 1 and counts(out) == "5 failed", "\n".join(out)  # the five failing runs, each failing alone
    assert any("runs chaos_runs asks for" in line for line in section(out))
