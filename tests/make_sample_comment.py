"""Regenerate docs/pr-comment.md's sample PR comment from a real run (not a test; run it by hand).

main = the SDK example agent as shipped; the PR = the same agent with two planted bugs
(double_write, retry_storm). Both run the same scenarios with the keyless sim; the PR's
run compares itself with main's report, and the comment is rendered from its report.json:

    python tests/make_sample_comment.py /tmp/sample   # writes /tmp/sample/comment.md
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from httpkit import start_orders  # noqa: E402
from sdk_config import ROOT, sdk_config  # noqa: E402

SCENARIOS = """
    - {name: six_faults, profiles: [six_faults]}
    - name: rate_limited
      faults: [{kind: rate_limit, target: llm, on_calls: [1], retry_after: 0.05}]
    - name: outage
      faults: [{kind: truncate_stream, target: llm, after_events: 3}]"""


def main(out: Path) -> None:
    from gate.cli import main as gate
    from gate.report.markdown import COMMENT_LIMIT, render
    from gate.report.model import Report

    out.mkdir(parents=True, exist_ok=True)
    os.chdir(out)
    proc, url = start_orders(ROOT)
    os.environ["ORDERS_URL"] = url
    try:
        sdk_config(out, scenarios=SCENARIOS, gate="{min_score: 80, fail_on: regression}",
                   extra="pricing: {'gpt-4o*': {input: 2.5, output: 10}}\nconcurrency: 2")
        os.environ["AGENT_BUGS"] = ""
        gate(["run", "-c", "chaos-gate.yaml", "-o", "main-report", "--quiet"])
        os.environ["AGENT_BUGS"] = "double_write,retry_storm"
        gate(["run", "-c", "chaos-gate.yaml", "-o", "pr-report", "--quiet", "--baseline", "main-report/report.json"])
    finally:
        proc.terminate()
    report = Report.model_validate_json((out / "pr-report" / "report.json").read_text())
    (out / "comment.md").write_text(render(report, limit=COMMENT_LIMIT))


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "sample-comment").resolve())
