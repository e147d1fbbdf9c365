"""Small things a new user meets in the first hour (issue 40, item 7): `instrument: off` written
unquoted (YAML reads it as false) means off, and `chaos-gate plan | head` exits quietly."""

from __future__ import annotations

import subprocess
import sys

from conftest import EXAMPLE, write_config
from gate.plan import load_config


def test_instrument_off_unquoted_means_off(tmp_path):
    text = (EXAMPLE / "chaos-gate.yaml").read_text().replace("agent:\n", "agent:\n  instrument: off\n", 1)
    text = text.replace("python3 agent.py", f"python3 {EXAMPLE / 'agent.py'}")
    assert load_config(write_config(tmp_path, text)).config.agent.instrument == "off"


def test_plan_piped_into_head_exits_quietly(tmp_path):
    text = (EXAMPLE / "chaos-gate.yaml").read_text().replace("python3 agent.py", f"python3 {EXAMPLE / 'agent.py'}")
    text = text.replace("inputs:\n", "inputs:\n" + "".join(f"  - {{id: extra-{i}, text: 'question {i}'}}\n"
                                                        for i in range(3000)), 1)
    config = write_config(tmp_path, text)
    done = subprocess.run(f"{sys.executable} -m gate plan -c {config} | head -1", shell=True, capture_output=True,
                          text=True, timeout=120, executable="/bin/bash")
    assert done.stdout.startswith("cell\t") and done.stdout.count("\n") == 1
    assert done.stderr == "", done.stderr  # no BrokenPipeError traceback
    piped = subprocess.run(f"set -o pipefail; {sys.executable} -m gate plan -c {config} | head -1", shell=True,
                           capture_output=True, text=True, timeout=120, executable="/bin/bash")
    assert piped.returncode == 0  # a listing cut short by its reader is no failure, even under pipefail
