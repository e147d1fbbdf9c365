"""docs/pytest.md's example, copied out of the page verbatim and run: its world file and its test,
through pytester with nothing configured, and the output the page shows, line for line.

Each block follows an `<!-- example: NAME -->` comment; `output` is what the run must print.
"""

from __future__ import annotations

import re
from pathlib import Path

pytest_plugins = ["pytester"]
DOC = Path(__file__).resolve().parent.parent / "docs" / "pytest.md"
BLOCK = re.compile(r"<!-- example: (\S+) -->\n```\w*\n(.*?)\n```", re.S)


def examples() -> dict[str, str]:
    return dict(BLOCK.findall(DOC.read_text(encoding="utf-8")))


def test_the_pages_example_runs_and_prints_what_the_page_says(pytester):
    blocks = examples()
    assert set(blocks) == {"worlds/shop.yaml", "test_refunds.py", "output"}
    for name, text in blocks.items():
        if name != "output":
            (pytester.path / name).parent.mkdir(parents=True, exist_ok=True)
            (pytester.path / name).write_text(text + "\n", encoding="utf-8")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    assert result.ret == 1  # the planted double refund is caught
    out = result.stdout.lines
    for line in blocks["output"].splitlines():
        assert line in out, f"the page shows {line!r}; the run printed:\n" + "\n".join(out[-20:])
    fixed = blocks["test_refunds.py"].replace("range(2)", "range(1)")  # the page's fix: never resend a write
    (pytester.path / "test_refunds.py").write_text(fixed, encoding="utf-8")
    again = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    assert "  PASS 100% >= 95% (20 of 20 passed)" in again.stdout.lines
