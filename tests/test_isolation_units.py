"""The pieces of the agent's separation (gate/agent/separation.py, accounting.py), each on its own: which
path a user cannot reach, which program a command starts, the hint a refused path gets, the line a
non-root gate writes, GitHub's files taken out of reach, the atomic report files and the sweep."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gate.agent import accounting, separation
from gate.agent.separation import Identity

NOBODY = Identity("nobody", 65534, 65534, "/h", "/t")
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="only root can make files another user cannot read")


@as_root
def test_blocked_names_the_first_directory_out_of_reach(open_dir):
    assert separation.blocked("/tmp/pytest-of-root/x", NOBODY) in ("/tmp/pytest-of-root", None)
    private = open_dir / "private"
    (private / "deep").mkdir(parents=True)
    (private / "deep" / "agent.py").write_text("")
    private.chmod(0o700)
    assert separation.blocked(private / "deep" / "agent.py", NOBODY) == str(private)
    private.chmod(0o755)
    assert separation.blocked(private / "deep" / "agent.py", NOBODY) is None
    (private / "deep" / "agent.py").chmod(0o600)
    assert separation.blocked(private / "deep" / "agent.py", NOBODY) == str(private / "deep" / "agent.py")


def test_the_program_of_a_shell_line_and_its_script(tmp_path):
    (tmp_path / "agent.py").write_text("")
    argv = ["/bin/sh", "-c", "FOO=1 exec python3 -u agent.py --port 1"]
    found = separation.programs(argv, tmp_path, "/usr/bin:/bin")
    assert found[0].endswith("/python3") and found[1] == str(tmp_path / "agent.py")
    assert separation.programs(["./run.sh"], tmp_path, "") == [str(tmp_path / "run.sh")]


def test_a_refused_path_in_the_log_gets_the_user_and_the_fix():
    python = "PermissionError: [Errno 13] Permission denied: '/root/.cache/x'"
    node = "Error: EACCES: permission denied, open '/work/app/data.json'"
    assert "/root/.cache/x" in separation.explain(python, NOBODY) and "agent.user: off" in separation.explain(python, NOBODY)
    assert "/work/app/data.json" in separation.explain(node, NOBODY)
    assert separation.explain(python, None) == "" and separation.explain("all fine", NOBODY) == ""


def test_home_and_tmpdir_are_the_users_own_unless_the_config_set_them():
    env = {"HOME": "/root", "TMPDIR": "/tmp", "PATH": "/bin"}
    assert separation.as_user(env, NOBODY) == {"HOME": "/h", "TMPDIR": "/t", "PATH": "/bin"}
    assert separation.as_user(env, NOBODY, {"HOME": "/mine"})["HOME"] == "/root"
    assert separation.as_user(env, None) is env


def test_a_gate_that_is_not_root_says_so_in_one_line(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1001)
    separation.begin_run()
    assert separation.identity_for("auto") is None
    assert separation.summary().startswith("not separated: the gate runs as uid 1001, not root")
    with pytest.raises(separation.Unreachable, match="not root"):
        separation.identity_for("chaos-agent")
    separation.begin_run()


@as_root
def test_a_user_that_does_not_exist_is_named(monkeypatch):
    separation.begin_run()
    with pytest.raises(separation.Unreachable, match="no such user"):
        separation.identity_for("no-such-user-41")
    who = separation.identity_for("auto")
    assert who.uid != 0 and Path(who.home).stat().st_uid == who.uid and Path(who.tmp).stat().st_mode & 0o777 == 0o700
    separation.end_run()
    assert not Path(who.home).exists()


@as_root
def test_githubs_files_lose_group_and_other_write(tmp_path):
    from gate.github.workflow import protect

    folder = tmp_path / "commands"
    folder.mkdir()
    folder.chmod(0o777)
    output = folder / "output"
    output.touch()
    output.chmod(0o666)
    assert set(protect({"GITHUB_OUTPUT": str(output)})) == {str(output), str(folder)}
    assert output.stat().st_mode & 0o777 == 0o644 and folder.stat().st_mode & 0o777 == 0o755


def test_report_files_are_replaced_whole(tmp_path):
    from gate.report import write_atomic

    target = tmp_path / "report.json"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        write_atomic(target, lambda p: (p.write_text("half"), (_ for _ in ()).throw(RuntimeError("crash"))))
    assert target.read_text() == "old" and not list(tmp_path.glob(".*.tmp"))
    write_atomic(target, lambda p: p.write_text("new"))
    assert target.read_text() == "new" and target.stat().st_mode & 0o777 == 0o644


def test_the_sweep_kills_a_daemon_that_left_its_group_and_names_it():
    before = accounting.descendants(os.getpid())
    accounting._prctl(accounting.PR_SET_CHILD_SUBREAPER, 1)
    code = "import os, time\nif os.fork(): os._exit(0)\nos.setsid()\ntime.sleep(60)"
    subprocess.run([sys.executable, "-c", code, "sweep-test-daemon"], check=True)
    time.sleep(0.2)
    killed = accounting.sweep(before)
    assert any("sweep-test-daemon" in cmd for cmd in killed), killed
    assert not accounting._new(before, None)


@as_root
def test_a_path_the_config_hands_the_agent_must_be_usable_by_its_user(open_dir):
    (open_dir / "data.json").write_text("{}")
    private = open_dir / "private"
    private.mkdir(mode=0o700)
    env = {"PATH": "/usr/bin", "DATA": str(open_dir / "data.json"), "LEDGER": str(private / "ledger.txt"),
           "NEW": str(open_dir / "new.txt"), "PYTHONPATH": "/a:/b"}
    separation.check(NOBODY, ["/usr/bin/true"], open_dir, env, ["DATA", "PYTHONPATH"])
    with pytest.raises(separation.Unreachable, match="LEDGER names") as caught:
        separation.check(NOBODY, ["/usr/bin/true"], open_dir, env, ["LEDGER"])
    assert caught.value.path == str(private)
    with pytest.raises(separation.Unreachable, match=str(open_dir)):  # a new file: its directory must be writable
        separation.check(NOBODY, ["/usr/bin/true"], open_dir, env, ["NEW"])


def test_what_the_gate_makes_the_agent_load_is_checked_too():
    env = {"PYTHONPATH": f"{sys.prefix}:relative", "NODE_OPTIONS": f'--require "{__file__}"',
           "LD_PRELOAD": "/no/such.so", "CHAOS_GATE_REAL_PATH": "/usr/bin"}
    assert separation.loaded(env) == [sys.prefix, __file__, sys.executable]


def _python_under_a_private_home(open_dir: Path) -> tuple[Path, Path]:
    """A base Python under a 0700 home (pyenv's shape) and a venv made from it, elsewhere and readable: the
    venv's own `python3` is a copy (`--copies`, as some tools make it), so only its pyvenv.cfg says what it runs."""
    base = open_dir / "root-home" / ".pyenv" / "versions" / "3.11.7"
    (base / "bin").mkdir(parents=True)
    (base / "lib" / "python3.11").mkdir(parents=True)
    (base / "bin" / "python3").write_text("")
    venv = open_dir / "project" / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python3").write_text("")
    (venv / "bin" / "python3").chmod(0o755)
    (venv / "pyvenv.cfg").write_text(f"home = {base / 'bin'}\ninclude-system-site-packages = false\n"
                                     "version = 3.11.7\n")
    (open_dir / "root-home").chmod(0o700)
    return venv / "bin" / "python3", open_dir / "root-home"


def test_what_runs_follows_a_shebang_through_env_and_a_venv_to_its_base(tmp_path):
    venv_python, _ = _python_under_a_private_home(tmp_path)
    script = tmp_path / "agent"
    script.write_text("#!/usr/bin/env python3\nprint('hi')\n")
    found = separation.what_runs(str(script), str(venv_python.parent))
    base = tmp_path / "root-home" / ".pyenv" / "versions" / "3.11.7"
    assert found == [str(venv_python), str(base / "bin"), str(base / "lib" / "python3.11")]
    assert separation.what_runs(str(tmp_path / "missing"), "") == []


@as_root
def test_a_venv_of_a_python_under_a_private_home_is_out_of_reach(open_dir):
    venv_python, private = _python_under_a_private_home(open_dir)
    (open_dir / "project" / "agent.py").write_text("")
    with pytest.raises(separation.Unreachable) as caught:
        separation.check(NOBODY, [str(venv_python), "agent.py"], open_dir / "project", {"PATH": "/usr/bin:/bin"})
    assert caught.value.path == str(private)  # the real cause, not a later exit 1 at start


@as_root
def test_the_cli_falls_back_with_one_line_and_the_action_refuses_naming_the_fix(open_dir, monkeypatch):
    venv_python, private = _python_under_a_private_home(open_dir)
    (open_dir / "project" / "agent.py").write_text("")
    argv, cwd, env = [str(venv_python), "agent.py"], open_dir / "project", {"PATH": "/usr/bin:/bin"}
    separation.begin_run()
    try:
        assert separation.choose("auto", argv, cwd, env) is None  # the CLI: runs as the gate's own user
        assert separation.choose("auto", argv, cwd, env, instance=1) is None
        line = separation.summary()
        assert line.count("not separated") == 1 and str(private) in line and "agent.user: off" in line
        assert "share" not in line and "run as" not in line  # never "instances share X" beside "not separated"
        separation.require_box(True)  # the Action, without allow-unboxed
        with pytest.raises(separation.Unreachable, match="allow-unboxed: true") as caught:
            separation.choose("auto", argv, cwd, env)
        assert caught.value.path == str(private)
    finally:
        separation.require_box(False)
        separation.end_run()
