"""Why a fault never matched says what really happened (issue 42, item 5).

The `double_write` profile's PUT and PATCH faults against the SDK example, whose orders tool
is reached over HTTP and only ever receives GET and POST: the reason must say the tool was
reached over HTTP and never received a PUT (or PATCH), not that no in-process seam was loaded,
as if the tool had not been reached. Where nothing was reached over HTTP the seam sentence stays.
"""

from __future__ import annotations

import shutil

import yaml
from pydantic import TypeAdapter

from conftest import ROOT, load_report
from gate.cli import main
from gate.config.chaos import Fault
from gate.verdict.reach import build_reach, unmatched_reason


def test_a_reached_http_tool_that_never_got_a_put_is_said_so(tmp_path):
    example = tmp_path / "sdk_agent"
    shutil.copytree(ROOT / "examples" / "sdk_agent", example, ignore=shutil.ignore_patterns("__pycache__"))
    config = yaml.safe_load((example / "chaos-gate.yaml").read_text())
    config["contract"]["scenarios"] = []
    config["chaos"] = {"profiles": ["double_write"]}
    config.update(concurrency=1, gate={"min_score": 0, "allow_vacuous": True})
    (example / "chaos-gate.yaml").write_text(yaml.safe_dump(config))
    main(["run", "-c", str(example / "chaos-gate.yaml"), "-o", str(tmp_path / "out"), "--quiet"])
    [profile] = [sc for sc in load_report(tmp_path / "out")["verdict"]["coverage"] if sc["scenario"] == "double_write"]
    post, put, patch = sorted(profile["faults"], key=lambda f: f["index"])  # the profile's POST, PUT, PATCH
    assert post["status"] == "fired", post
    for row, method in ((put, "PUT"), (patch, "PATCH")):
        assert row["status"] == "never_matched"
        assert f"its tools were reached over HTTP (tool:orders) and never received a {method}" in row["reason"]
        assert "in-process seam" not in row["reason"]


def test_the_seam_sentence_stays_where_nothing_was_reached_over_http():
    put = TypeAdapter(Fault).validate_python({"kind": "error", "target": "tools", "method": "PUT"})
    only_llm = build_reach([{"targets": {"llm:openai": 1}, "seams": {}, "offered": set()}])
    assert "no in-process seam was loaded" in unmatched_reason(put, [], only_llm)
    with_tool = build_reach([{"targets": {"llm:openai": 1, "tool:orders": 2}, "seams": {}, "offered": set()}])
    assert unmatched_reason(put, [], with_tool) == \
        "its tools were reached over HTTP (tool:orders) and never received a PUT"
    by_path = TypeAdapter(Fault).validate_python({"kind": "error", "target": "tools", "path": "^/admin"})
    assert unmatched_reason(by_path, [], with_tool).endswith("never received a request to a path matching /^/admin/")
    mcp_post = TypeAdapter(Fault).validate_python({"kind": "error", "target": "tools", "method": "POST"})
    assert "in-process seam" in unmatched_reason(mcp_post, [], with_tool)  # a POST: a seam's call could be it
