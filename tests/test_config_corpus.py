"""A corpus of broken configs and command lines: each one exits 2 with one located message.

Every case (tests/broken_config_cases.py) runs the real CLI (`chaos-gate validate`,
or the command line itself) and asserts: exit code 2, no traceback, the first stderr
line names the file, the line of the offending value, the key path, what is wrong
and, where a near name exists, the suggestion.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from broken_config_cases import (CONFIG_CASES, FLAG_CASES, STARTED, Case, billion_laughs, cfg, invariant,
                                 marked_line, scenario)
from gate.cli import main


def _write(tmp_path, case: Case):
    path = tmp_path / "chaos-gate.yaml"
    if isinstance(case.text, bytes):
        path.write_bytes(case.text)
    else:
        path.write_text(case.text, encoding="utf-8")
    return path


def _validate(path, capsys) -> tuple[int, str, str]:
    code = main(["validate", "-c", str(path)])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("case", CONFIG_CASES, ids=[c.id for c in CONFIG_CASES])
def test_broken_config_exits_2_with_one_located_message(case: Case, tmp_path, capsys):
    path = _write(tmp_path, case)
    code, out, err = _validate(path, capsys)
    assert code == 2, err
    assert "Traceback" not in out + err
    first = err.splitlines()[0]
    line = case.line if case.line is not None else marked_line(case.text)
    where = f"chaos-gate: {path}:{line}: " + (f"{case.key}: " if case.key else "")
    assert first.startswith(where), first
    assert case.says in first, first
    if case.suggests:
        assert f"(did you mean '{case.suggests}'?)" in first, first


def test_corpus_size_and_distinct_ids():
    ids = [c.id for c in CONFIG_CASES] + [c[0] for c in FLAG_CASES]
    assert len(ids) >= 60 and len(set(ids)) == len(ids)


# --- command lines ------------------------------------------------------------------------

@pytest.mark.parametrize("case", FLAG_CASES, ids=[c[0] for c in FLAG_CASES])
def test_bad_flag_is_reported_as_that_flag(case, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no config here: the flag must be refused before any file is read
    _, argv, says = case
    assert main(argv) == 2
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    assert out.err.splitlines()[0].startswith(f"chaos-gate: {says}"), out.err


def test_real_process_reports_a_flag_and_a_config_line(tmp_path):
    """The installed entry point, not only main(): exit status 2 and the same first line."""
    flag = subprocess.run([sys.executable, "-m", "gate", "run", "--concurrency", "-1"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert flag.returncode == 2 and flag.stderr.startswith("chaos-gate: --concurrency: must be at least 1")
    path = tmp_path / "c.yaml"
    path.write_text(cfg("seed: !!python/object/apply:os.system [echo pwned]\n"))
    run = subprocess.run([sys.executable, "-m", "gate", "validate", "-c", str(path)],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "pwned" not in run.stdout and "Traceback" not in run.stderr
    assert run.stderr.startswith(f"chaos-gate: {path}:12: YAML tag")


# --- the loader is bounded ------------------------------------------------------------------

def test_billion_laughs_is_refused_in_under_a_second(tmp_path, capsys):
    path = tmp_path / "bomb.yaml"
    path.write_text(cfg("x_aliases:\n" + billion_laughs()))
    began = time.perf_counter()
    code, _, err = _validate(path, capsys)
    assert code == 2 and "expands to more than" in err
    assert time.perf_counter() - began < 1.0


def test_several_problems_first_line_is_whole_and_counts_the_rest(tmp_path, capsys):
    text = cfg("contract:\n  invariants:\n    - {id: x, type: contains, valeu: a}\n"
               "    - {id: y, type: regex, pattern: '('}\n")
    path = tmp_path / "c.yaml"
    path.write_text(text)
    code, _, err = _validate(path, capsys)
    lines = err.splitlines()
    assert code == 2 and len(lines) == 2
    assert lines[0].startswith(f"chaos-gate: {path}:14: contract.invariants[0].valeu: unknown key 'valeu'")
    assert lines[0].endswith("(and 1 more problem)")
    assert lines[1].strip().startswith(f"{path}:15: contract.invariants[1].pattern: not a valid regular")


# --- vacuous references: errors, or warnings under gate.allow_vacuous ------------------------

VACUOUS = {
    "when-input": invariant("{id: x, type: not_empty, when: {input: nobody}}"),
    "when-scenario": invariant("{id: x, type: not_empty, when: {scenario: nothing}}"),
    "when-stage-empty": invariant("{id: x, type: not_empty, when: {stage: replay}}"),
    "fault-target": scenario("{kind: error, target: payments}"),
    "trace-target": invariant("{id: x, type: tool_calls_max, max: 1, target: payments}"),
}


@pytest.mark.parametrize("name", list(VACUOUS))
def test_vacuous_reference_is_an_error_then_a_warning_when_allowed(name, tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_text(cfg(VACUOUS[name]))
    code, _, err = _validate(path, capsys)
    assert code == 2 and "vacuous" in err.splitlines()[0]
    path.write_text(cfg(VACUOUS[name] + "gate: {allow_vacuous: true}\n"))
    code, out, err = _validate(path, capsys)
    assert code == 0 and "valid" in out
    assert err.startswith(f"warning: {path}:") and "vacuous" in err


def test_allow_vacuous_keeps_real_errors_errors(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_text(cfg(invariant("{id: x, type: not_empty, when: {stage: mutaton}}") +
                        "gate: {allow_vacuous: true}\n"))
    code, _, err = _validate(path, capsys)
    assert code == 2 and "unknown stage 'mutaton'" in err


def test_warnings_reach_the_loaded_config(tmp_path):
    from gate.plan import load_config

    path = tmp_path / "c.yaml"
    path.write_text(cfg(VACUOUS["fault-target"] + "gate: {allow_vacuous: true}\n"))
    [warning] = load_config(path).warnings
    assert warning.startswith(f"{path}:16: chaos.scenarios[0].faults[0].target: vacuous:")


def test_fixed_url_allows_a_fixed_invoke_address(tmp_path, capsys):
    agent = STARTED.replace('"{{url}}/chat"}', '"http://127.0.0.1:8080/chat", fixed_url: true}')
    path = tmp_path / "c.yaml"
    path.write_text(cfg(agent=agent))
    assert _validate(path, capsys)[0] == 0


# --- item 7: the scenario of a mutation cell ------------------------------------------------

def test_mutation_cells_have_scenario_mutation_and_plan_shows_it(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_text(cfg(invariant("{id: base-only, type: not_empty, when: {scenario: baseline}}")))
    assert main(["plan", "-c", str(path)]) == 0
    rows = [row.split("\t") for row in capsys.readouterr().out.splitlines()]
    assert rows[0] == ["cell", "scenario", "seed", "invariants"]
    by_id = {row[0]: row for row in rows[1:]}
    mutation_rows = [row for cid, row in by_id.items() if cid.startswith("mutation/")]
    assert mutation_rows and all(row[1] == "mutation" for row in mutation_rows)
    assert all("base-only" not in row[3] for row in mutation_rows)  # baseline no longer means mutation too
    assert by_id["contract/refund/baseline"][1] == "baseline" and "base-only" in by_id["contract/refund/baseline"][3]
