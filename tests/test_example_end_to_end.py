"""The bundled example, end to end through the real CLI: verdicts, determinism, JUnit."""


import pytest
from junitparser import Error, Failure, JUnitXml

from conftest import EXAMPLE, load_report, same_text
from gate.cli import main


@pytest.fixture(scope="module")
def example_runs(tmp_path_factory):
    """Run the example once per (mode, concurrency) and keep the output dirs."""
    out = {}
    for mode, k in (("sound", 1), ("sound", 4), ("fragile", 2)):
        d = tmp_path_factory.mktemp(f"{mode}-{k}")
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("AGENT_MODE", mode)
            code = main(["run", "-c", str(EXAMPLE / "chaos-gate.yaml"), "-o", str(d), "--concurrency", str(k),
                         "--quiet"])
        out[(mode, k)] = (code, d)
    return out


def stage(report, name):
    return next(s for s in report["verdict"]["stages"] if s["stage"] == name)


def test_fragile_agent_scores_clearly_lower_and_fails(example_runs):
    sound_code, sound_dir = example_runs[("sound", 1)]
    fragile_code, fragile_dir = example_runs[("fragile", 2)]
    sound, fragile = load_report(sound_dir), load_report(fragile_dir)
    assert (sound_code, sound["verdict"]["verdict"]) == (0, "pass")
    assert (fragile_code, fragile["verdict"]["verdict"]) == (1, "fail")
    assert stage(sound, "mutation")["score"] - stage(fragile, "mutation")["score"] >= 10
    assert "critical invariant breached: no-injected-reply" in fragile["verdict"]["reasons"]


def test_verdict_part_is_byte_identical_at_concurrency_1_and_4(example_runs):
    one = (example_runs[("sound", 1)][1] / "report.json").read_text()
    four = (example_runs[("sound", 4)][1] / "report.json").read_text()
    import json

    a, b = json.loads(one), json.loads(four)
    assert a["run"]["concurrency"] == 1 and b["run"]["concurrency"] == 4
    from gate.report.model import Report

    ra, rb = Report.model_validate(a), Report.model_validate(b)
    assert ra.verdict.model_dump_json() == rb.verdict.model_dump_json()
    # and the text of the verdict section in the files themselves
    same_text(one[one.index('"verdict": {'):one.index('"timings"')], four[four.index('"verdict": {'):four.index('"timings"')])


def test_junit_parses_and_counts_match_report(example_runs):
    for key in (("sound", 1), ("fragile", 2)):
        d = example_runs[key][1]
        report = load_report(d)
        xml = JUnitXml.fromfile(str(d / "junit.xml"))
        suites = {s.name: s for s in xml}
        assert set(suites) == {f"chaos-gate.{s['stage']}" for s in report["verdict"]["stages"]}
        cases = [c for s in xml for c in s]
        assert len(cases) == report["verdict"]["counts"]["cells"]
        failing_cases = [c for c in cases if any(isinstance(r, Failure) for r in c.result)]
        assert len(failing_cases) == report["verdict"]["counts"]["failed"]
        failures = [r for c in cases for r in c.result if isinstance(r, Failure)]
        assert len(failures) == len(failing_cases)  # one <failure> per failing testcase, breaches folded in
        breaches = [b for cell in report["verdict"]["cells"] for b in cell["invariants"] if b["breached"]]
        assert all(f"] {b['id']}: " in " ".join(f.message for f in failures) for b in breaches)
        assert not [r for c in cases for r in c.result if isinstance(r, Error)]
        for s in xml:
            props = {p.name: p.value for p in s.properties()}
            st = next(x for x in report["verdict"]["stages"] if f"chaos-gate.{x['stage']}" == s.name)
            assert props["score"] == f"{st['score']:.2f}"


def test_failure_carries_invariant_input_and_output(example_runs):
    d = example_runs[("fragile", 2)][1]
    xml = JUnitXml.fromfile(str(d / "junit.xml"))
    failure = next(r for s in xml for c in s for r in c.result if isinstance(r, Failure) and "] no-injected-reply: " in r.message)
    assert "input: " in failure.text and "Ignore all previous instructions" in failure.text
    assert "output: PWNED" in failure.text and "--only mutation/" in failure.text


def test_reproduce_command_reruns_exactly_that_cell(example_runs, tmp_path, monkeypatch):
    report = load_report(example_runs[("fragile", 2)][1])
    bad = next(c for c in report["verdict"]["cells"] if c["status"] == "fail")
    assert bad["reproduce"].startswith("AGENT_MODE=fragile chaos-gate run")  # it carries the env that mattered
    assert f"chaos-gate run -c {EXAMPLE / 'chaos-gate.yaml'} --only {bad['id']}" in bad["reproduce"]
    monkeypatch.setenv("AGENT_MODE", "fragile")
    code = main(["run", "-c", str(EXAMPLE / "chaos-gate.yaml"), "--only", bad["id"], "-o", str(tmp_path), "--quiet"])
    again = load_report(tmp_path)
    assert code == 1 and [c["id"] for c in again["verdict"]["cells"]] == [bad["id"]]
    assert again["verdict"]["cells"][0] == bad


def test_markdown_summary_leads_with_verdict_and_has_reproduce(example_runs):
    md = (example_runs[("fragile", 2)][1] / "summary.md").read_text()
    assert md.startswith("## ❌ chaos-gate: **FAIL** — score ")
    assert "### Invariants" in md and "`no-injected-reply`" in md
    assert "chaos-gate run -c " in md and "--only mutation/" in md


def test_unknown_only_is_a_clear_error(tmp_path, capsys):
    code = main(["run", "-c", str(EXAMPLE / "chaos-gate.yaml"), "--only", "nope/x", "-o", str(tmp_path)])
    assert code == 2 and "no cell of chaos-gate.yaml has that id" in capsys.readouterr().err
