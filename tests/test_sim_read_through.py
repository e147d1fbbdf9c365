"""Mutations test the agent, not the sim (issue 40, item 6): under `sim` a mutated input is answered by the
rule its original matched, as a capable model reads through typos and look-alike letters.

The SDK example's refund rule wants `refund ... <order number>`; typos and homoglyphs often break
that regex, and the mutated cells then got the `default` answer: the mutation stage measured the
sim. Now every mutation cell whose input still carries the order number runs the refund, and the
trace says when the sim read through a mutation.
"""

from __future__ import annotations

import re
import shutil

import yaml

from conftest import ROOT, load_report
from gate.cli import main

RULE = re.compile(r"refund.*?(\d{3,})", re.IGNORECASE | re.DOTALL)


def test_a_mutated_input_is_answered_by_the_rule_its_original_matches(tmp_path, monkeypatch):
    example = tmp_path / "sdk_agent"
    shutil.copytree(ROOT / "examples" / "sdk_agent", example, ignore=shutil.ignore_patterns("__pycache__"))
    config = yaml.safe_load((example / "chaos-gate.yaml").read_text())
    config["contract"]["scenarios"] = []
    config["mutation"] = {"enabled": True, "count": 12, "kinds": {"typo": 1, "homoglyph": 1},
                          "preserve": {"numbers": True}}
    config.update(concurrency=1, gate={"min_score": 0})
    config.setdefault("chaos", {})["explore"] = False  # no fault named: it would explore, which this is not about
    (example / "chaos-gate.yaml").write_text(yaml.safe_dump(config))
    monkeypatch.delenv("AGENT_BUGS", raising=False)
    main(["run", "-c", str(example / "chaos-gate.yaml"), "-o", str(tmp_path / "out"), "--quiet", "--full-report"])
    cells = [c for c in load_report(tmp_path / "out")["verdict"]["cells"] if c["stage"] == "mutation"]
    broken = [c for c in cells if not RULE.search(c["input"])]
    assert broken, "no mutation broke the rule's regex: the test would prove nothing"
    for cell in broken:
        run = cell["runs"][0]
        assert run["output"] == "Your refund for order 1234 has been issued.", (cell["input"], run["output"])
        notes = [s.get("note") or "" for s in run["trace"]]
        assert any("answered by the rule its original matches" in n for n in notes), notes
