"""`validate`, `plan` and `schema` start without the heavy layers (issue 16).

The proxy, Docker, rich, httpx, jsonschema and the SDKs are imported lazily so that the
commands a developer runs most start fast; these tests pin the behaviour (the commands still
work and print the same) and the absence of those modules, never a time (speed lives in bench/).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "support" / "chaos-gate.yaml"
HEAVY = ("httpx", "rich", "jsonschema", "uvicorn", "docker", "openai", "anthropic", "gate.proxy", "gate.agent.instance")

PROBE = """
import json, sys
from gate.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
heavy = [m for m in {heavy!r} if m in sys.modules]
sys.stderr.write("LOADED " + json.dumps(heavy) + "\\n")
sys.exit(code)
"""


def _run(*args: str) -> tuple[int, str, list[str]]:
    proc = subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    line = next(x for x in proc.stderr.splitlines() if x.startswith("LOADED "))
    return proc.returncode, proc.stdout, json.loads(line[len("LOADED "):])


def test_validate_prints_and_stays_light():
    code, out, loaded = _run("validate", "-c", str(EXAMPLE))
    assert code == 0
    assert out == f"{EXAMPLE}: valid (39 cells, 9 invariants)\n"
    assert loaded == []


def test_plan_lists_cells_and_stays_light():
    code, out, loaded = _run("plan", "-c", str(EXAMPLE))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "cell\tscenario\tseed\tinvariants" and len(lines) == 40
    assert loaded == []


def test_schema_is_complete_and_stays_light():
    code, out, loaded = _run("schema")
    assert code == 0
    schema = json.loads(out)
    assert schema["title"] == "chaos-gate.yaml" and "json_schema" in json.dumps(schema)
    assert loaded == []


def test_lazy_package_attributes_resolve():
    from gate.agent import AgentInstance, RawOutcome
    from gate.config.service_refs import resolve_config, service_problems
    from gate.services import running_services

    assert AgentInstance.__name__ == "AgentInstance" and RawOutcome.__name__ == "RawOutcome"
    assert callable(resolve_config) and callable(running_services) and callable(service_problems)


def test_json_schema_invariant_still_checks_its_schema(tmp_path):
    """jsonschema is imported when a json_schema invariant is validated, not before."""
    bad = EXAMPLE.read_text().replace(
        "    - {id: concise,", "    - {id: shaped, type: json_schema, schema: {type: 12}}\n    - {id: concise,")
    path = tmp_path / "chaos-gate.yaml"
    path.write_text(bad.replace("command: [python3, agent.py]", f"command: [python3, {EXAMPLE.parent / 'agent.py'}]"))
    code, _, _ = _run("validate", "-c", str(path))
    assert code == 2


BUILT_PROBE = """
import json
from gate.plan import load_config
from gate.contracts import INVARIANTS
from gate.faults import FAULTS
loaded = load_config({path!r})
cfg = loaded.config
named_faults = {{f.kind for s in cfg.chaos.scenarios + cfg.contract.scenarios for f in s.faults}}
named_faults |= {{f.kind for f in cfg.chaos.faults}}
print(json.dumps({{
    "built_faults": sorted(k for k, c in FAULTS.items() if c.__pydantic_complete__),
    "built_invariants": sorted(k for k, c in INVARIANTS.items() if c.__pydantic_complete__),
    "named_invariants": sorted({{i.type for i in cfg.contract.invariants}}),
    "named_faults": sorted(named_faults),
}}))
"""


def test_only_the_catalog_members_a_config_names_are_built():
    """The fault and invariant catalogs are built per member on first use, not all at import."""
    config = ROOT / "examples" / "sdk_agent" / "chaos-gate.yaml"
    proc = subprocess.run([sys.executable, "-c", BUILT_PROBE.format(path=str(config))], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=True)
    seen = json.loads(proc.stdout)
    # stays_up is implicit for a process agent (gate/contracts/outcome_checks.py): built because it always applies
    assert seen["built_invariants"] == sorted(set(seen["named_invariants"]) | {"stays_up"})
    assert seen["built_faults"] == seen["named_faults"] and 0 < len(seen["named_faults"]) < 29


def test_catalog_errors_keep_the_discriminated_union_shape():
    """Line mapping and 'did you mean' read these locations and types; laziness must not change them."""
    import pytest
    from pydantic import ValidationError

    from gate.config.chaos import ChaosConfig
    from gate.faults import FAULTS

    with pytest.raises(ValidationError) as bad_param:
        ChaosConfig.model_validate({"faults": [{"kind": "latency", "ms": 5}, {"kind": "latency", "ms": "soon"}]})
    [err] = bad_param.value.errors()
    assert err["loc"] == ("faults", 1, "latency", "ms") and err["type"] == "float_parsing"

    with pytest.raises(ValidationError) as unknown:
        ChaosConfig.model_validate({"faults": [{"kind": "latncy", "ms": 5}]})
    [err] = unknown.value.errors()
    assert err["type"] == "union_tag_invalid" and err["loc"] == ("faults", 0)
    assert err["ctx"]["discriminator"] == "'kind'" and err["input"] == {"kind": "latncy", "ms": 5}

    with pytest.raises(ValidationError) as untagged:
        ChaosConfig.model_validate({"faults": [{"ms": 5}]})
    assert untagged.value.errors()[0]["type"] == "union_tag_not_found"

    with pytest.raises(ValidationError) as extra:
        ChaosConfig.model_validate({"faults": [{"kind": "latency", "ms": 5, "jitter": 1}]})
    assert extra.value.errors()[0]["loc"] == ("faults", 0, "latency", "jitter")

    built = FAULTS["latency"](ms=7)
    assert ChaosConfig(faults=[built]).faults[0] is built
    assert ChaosConfig.model_validate({"faults": [{"kind": "latency", "ms": 7}]}).model_dump()["faults"][0]["ms"] == 7


def test_the_startup_bench_prints_validate_beside_a_bare_interpreter():
    """bench/bench_startup.py (issue 34): validate's start, the interpreter's floor beside it, the target,
    and with --imports where the time goes; a number is never asserted here (speed lives in bench/)."""
    proc = subprocess.run([sys.executable, "bench/bench_startup.py", "--repeat", "1", "--imports"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=True)
    lines = proc.stdout.splitlines()
    assert any(line.startswith("python -c pass (floor)") for line in lines)
    [summary] = [line for line in lines if line.startswith("chaos-gate validate: ")]
    assert "(target <= 0.25 s on a quiet machine); bare interpreter " in summary and "above it: " in summary
    assert "validate's heaviest imports" in proc.stdout and "gate.config" in proc.stdout


def test_worlds_are_built_only_for_a_config_that_has_them():
    """`worlds:` is a lazily built section (gate/config/catalog_union.py LazyModel): a config without
    worlds never imports gate.worlds.model; one with worlds gets World instances, as before."""
    probe = ("import sys; from gate.plan import load_config; cfg = load_config(sys.argv[1]).config; "
             "print(sorted(m for m in sys.modules if m.startswith('gate.worlds')) != [], "
             "[type(w).__name__ for w in cfg.worlds])")
    for example, expected in (("support", "False []"), ("worlds_agent", "True ['World']")):
        config = ROOT / "examples" / example / "chaos-gate.yaml"
        out = subprocess.run([sys.executable, "-c", probe, str(config)], cwd=ROOT, capture_output=True, text=True,
                             timeout=60, check=True).stdout.strip()
        assert out == expected, example
