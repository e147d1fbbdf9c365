"""One uid per agent instance (issue 41): concurrent instances of one run cannot read each other's /proc.

Each worker's proxy hands its instance a `/fn/` token in CHAOS_GATE_FN_URL. Were all instances one
user, an instance could read a sibling's environ and forge calls into the sibling's trace. Under
`agent.user: auto` the first instance runs as the agent user and each later one as a uid of its own
(gate/agent/separation.py: `chaos-agent-N`, which the image creates), so the read is refused; a user
named in the config is shared, and there the same read succeeds — the test's proof that the attack
is real. Without the accounts the instances share a user and the report says so.
"""

from __future__ import annotations

import json
import os
import re
import textwrap

import pytest

from conftest import AGENTS, load_report

SYSTEM_PYTHON = "/usr/bin/python3"
pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the agent runs as another user only when the gate is root"),
    pytest.mark.skipif(not os.path.exists(SYSTEM_PYTHON), reason="needs a python3 outside /root (/usr/bin/python3)"),
]


def run(workdir, user: str, name: str = "") -> list[tuple[int, list[str]]]:
    from gate.cli import main

    name = name or user
    config = workdir / f"{name}.yaml"
    config.write_text(textwrap.dedent(f"""
        agent:
          user: {user}
          start:
            command: [{SYSTEM_PYTHON}, {json.dumps(str(AGENTS / 'sibling_agent.py'))}]
            ready: {{url: "{{{{url}}}}/health", timeout: 20}}
          invoke:
            http: {{url: "{{{{url}}}}/chat", body: {{input: "{{{{input}}}}"}}, output: $.reply}}
          timeout: 10
          offline: true
        inputs: [{{id: a, text: one}}, {{id: b, text: two}}, {{id: c, text: three}}, {{id: d, text: four}}]
        mutation: {{enabled: false}}
        contract: {{invariants: [{{id: answers, type: not_empty, severity: high}}]}}
        concurrency: 2
        """).lstrip())
    main(["run", "-c", str(config), "-o", str(workdir / name), "--quiet", "--full-report"])
    replies = [c["runs"][0]["output"] for c in load_report(workdir / name)["verdict"]["cells"]]
    out = []
    for reply in replies:
        found = re.match(r"uid=(\d+) siblings=(.*)", reply or "")
        assert found, replies
        out.append((int(found.group(1)), json.loads(found.group(2))))
    return out


def test_each_instance_has_a_uid_of_its_own_and_reads_no_siblings_token(open_dir):
    """Without chaos-agent-1 (a bare machine) the instances share the agent user and the report says so;
    with it (as the image has it: made here, and removed after) each has its own and the read is refused.
    One test, in that order, so no parallel test sees the account come and go."""
    import pwd
    import subprocess

    try:
        pwd.getpwnam("chaos-agent-1")
        made = False
    except KeyError:
        seen = run(open_dir, "auto", "bare")
        assert len({uid for uid, _ in seen}) == 1
        separation = load_report(open_dir / "bare")["run"]["separation"]
        assert "agent instances share" in separation and "chaos-agent-1" in separation
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "chaos-agent-1"],
                       check=True)
        made = True
    try:
        seen = run(open_dir, "auto")
    finally:
        if made:
            subprocess.run(["userdel", "chaos-agent-1"], check=False)
    uids = {uid for uid, _ in seen}
    assert len(uids) == 2 and 0 not in uids, seen
    tried = [s for _, sibs in seen for s in sibs]
    assert tried and all(s.startswith("denied") for s in tried), seen


def test_a_named_user_is_shared_and_then_the_token_is_readable(open_dir):
    seen = run(open_dir, "nobody")
    assert {uid for uid, _ in seen} == {65534}
    assert any(s.startswith("GOT") for _, sibs in seen for s in sibs), seen  # the sibling's whole environ

