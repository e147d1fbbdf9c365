"""An agent's text is never run as a GitHub workflow command, and the gate's own commands still are.

The runner reads each line of a step's stdout and stderr and runs the ones that parse as commands
(actions/runner: ActionCommand.TryParseV2 — `::name ...::data` after leading whitespace — then
TryParse — `##[name ...]data` anywhere in the line; registered names only, any case; matched
culture-sensitively, so ignorable characters such as U+200B are looked through). `runner_parse`
below is that parser, stricter than the runner: it looks through every control and format
character. An agent printing `::error::PWNED`, `::add-mask::x`, `::stop-commands::abc` and
`##[error]PWNED` on stdout, on stderr and in its answer is run through the real CLI and through
the Action; no line of what the gate prints parses, but the gate's own `::group::` and annotations.
"""

from __future__ import annotations

import io
import json
import random
import re
import subprocess
import sys
import unicodedata

import pytest

from conftest import ROOT
from gate.report.inert import InertStream, inert

# actions/runner ExtensionManager's IActionCommandExtension list, and ActionCommandManager's own stop-commands
REGISTERED = frozenset({"stop-commands", "set-env", "set-output", "save-state", "add-path", "add-mask", "add-matcher",
                        "remove-matcher", "warning", "error", "notice", "debug", "group", "endgroup", "echo"})
LINE_BREAK = re.compile(r"\r\n|\r|\n")  # StreamReader.ReadLine
HOSTILE = ["::error::PWNED", "::add-mask::x", "::stop-commands::abc", "##[error]PWNED"]
SNEAKY = ["  ::warning title=t::PWNED", "see ##[add-mask]x", ":\u200b:error::PWNED", "#\u00ad#[error]PWNED",
          "\u3000::ERROR::PWNED", "\x1b::debug::PWNED", "##\x1b[error]PWNED"]


def _looked_through(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cc", "Cf")


def _props(info: str) -> dict:
    pairs = (p.split("=", 1) for p in info.split(",") if "=" in p)
    return {k: v.replace("%3A", ":").replace("%2C", ",").replace("%25", "%") for k, v in pairs}


def runner_parse(line: str, registered=REGISTERED) -> tuple[str, dict, str] | None:
    """(command, properties, data) as the runner would parse `line`, or None."""
    seen = "".join(ch for ch in line if not _looked_through(ch))
    v2 = seen.lstrip()
    end = v2.find("::", 2)
    if v2.startswith("::") and end >= 0:
        name, _, info = v2[2:end].partition(" ")
        if name.lower() in registered:
            return name.lower(), _props(info), v2[end + 2:].replace("%0A", "\n").replace("%25", "%")
    at = seen.find("##[")
    close = seen.find("]", at)
    if at >= 0 and close >= 0:
        name = seen[at + 3:close].partition(" ")[0]
        if name.lower() in registered:
            return name.lower(), {}, seen[close + 1:]
    return None


def commands_in(text: str) -> list[tuple[str, str]]:
    """(line, parsed) for every line of `text` that parses as a command."""
    return [(line, got) for line in LINE_BREAK.split(text) if (got := runner_parse(line))]


def runner_processes(text: str) -> list[tuple[str, dict, str]]:
    """The commands the runner would process, in order, honouring stop-commands and its token."""
    done, token = [], None
    for line in LINE_BREAK.split(text):
        got = runner_parse(line, REGISTERED | ({token} if token else set()))
        if got is None:
            continue
        if token is not None:
            token = None if got[0] == token else token
        elif got[0] == "stop-commands":
            token = got[2].lower()
        else:
            done.append(got)
    return done


# --- the rule --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("line", HOSTILE + SNEAKY)
def test_every_command_line_is_inert_and_still_reads_the_same(line):
    assert runner_parse(line) is not None  # the model sees the attack...
    shown = inert(line)
    assert commands_in(shown) == []  # ...and none of it survives
    assert shown.replace("\\", "") == line.replace("\\", "")  # a backslash added, nothing lost


@pytest.mark.parametrize("text", ["std::vector<int>", "issue #12 [x] ## [y]", "a: b :: c", "| ::error::x |",
                                  "chaos-gate: 3/4 cells", "  - critical invariant breached: no-pwned", ":)"])
def test_ordinary_text_is_left_alone(text):
    assert inert(text) == text


def test_a_character_that_might_be_ignorable_is_looked_through():
    """Outside printable ASCII a character is not trusted to break a match: even where it would (a table's
    border), the line gets its backslash — a harmless extra, where trusting the wrong one would not be."""
    assert inert("│ ::error::x │") == "│ \\::error::x │"


TOKENS = ["::", "##[", ":", "#", "[", "]", "error", "add-mask", "stop-commands", " ", "\t", "\u200b", "\u00ad",
          "\x1b", "x", "\n", "\r", "\r\n", "\\", "\u3000"]


def test_no_mix_of_the_pieces_survives_and_streaming_agrees():
    rng = random.Random(20240917)
    for _ in range(3000):
        text = "".join(rng.choice(TOKENS) for _ in range(rng.randint(1, 14)))
        shown = inert(text)
        assert commands_in(shown) == [], repr(text)
        assert shown.replace("\\", "") == text.replace("\\", "")
        buf = io.StringIO()
        stream = InertStream(buf)
        cuts = sorted(rng.sample(range(len(text) + 1), min(3, len(text) + 1)))
        for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True):
            stream.write(text[a:b])
        stream.finish()
        assert buf.getvalue() == shown, repr(text)


def test_the_gates_own_command_goes_past_on_a_line_of_its_own():
    buf = io.StringIO()
    stream = InertStream(buf)
    stream.write("agent says ::error::PWNED and ##[error]PWNED")  # no newline yet
    stream.own("::group::chaos-gate run\n")
    stream.write("::add-mask::x\n")
    stream.own("::endgroup::\n")
    assert [got[0] for _, got in commands_in(buf.getvalue())] == ["group", "endgroup"]


# --- the real CLI ----------------------------------------------------------------------------------------------

AGENT = f"""
import sys
LINES = {HOSTILE + SNEAKY!r}
sys.stdin.read()
print("\\n".join(LINES), file=sys.stderr, flush=True)
print("\\n".join(LINES))
"""

CRASHING = f"""
import sys
LINES = {HOSTILE + SNEAKY!r}
print("\\n".join(LINES), flush=True)
print("\\n".join(LINES), file=sys.stderr, flush=True)
sys.exit(3)
"""

INVARIANTS = """mutation: {enabled: false}
contract:
  invariants:
    - {id: no-pwned, type: excludes, values: [PWNED], severity: critical}
"""


def script_agent(directory) -> None:
    """A command agent whose answer and stderr are the hostile lines, breaching `no-pwned`."""
    (directory / "agent.py").write_text(AGENT)
    (directory / "chaos-gate.yaml").write_text(
        f"version: 1\nagent:\n  invoke:\n    command:\n      command: [{json.dumps(sys.executable)}, agent.py]\n"
        "      input: stdin\n  timeout: 20\ninputs:\n  - {id: hi, text: hello}\n" + INVARIANTS)


def gate(*args: str) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "gate", *args], cwd=ROOT, capture_output=True, timeout=120)
    return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")


def test_the_log_tail_of_an_agent_that_did_not_start_is_inert(tmp_path):
    (tmp_path / "agent.py").write_text(CRASHING)
    (tmp_path / "chaos-gate.yaml").write_text(
        f"version: 1\nagent:\n  start:\n    command: [{json.dumps(sys.executable)}, agent.py]\n"
        "    ready: {url: '{{url}}/health', timeout: 20}\n  invoke:\n    http: {url: '{{url}}/chat', "
        "body: {message: '{{input}}'}, output: $.reply}\n  timeout: 20\ninputs:\n  - {id: hi, text: hello}\n"
        + INVARIANTS)
    code, out, err = gate("run", "-c", str(tmp_path / "chaos-gate.yaml"), "-o", str(tmp_path / "out"))
    assert code == 2
    assert err.count("PWNED") >= 2 * len(HOSTILE)  # the log tail is shown, whole...
    assert commands_in(out) == [] and commands_in(err) == []  # ...and inert


def test_the_answer_and_stderr_are_inert_in_run_and_reproduce(tmp_path):
    script_agent(tmp_path)
    config = str(tmp_path / "chaos-gate.yaml")
    code, out, err = gate("run", "-c", config, "-o", str(tmp_path / "out"))
    assert code == 1 and "no-pwned" in out
    assert commands_in(out) == [] and commands_in(err) == []
    code, out, err = gate("reproduce", "contract/hi/baseline", "-c", config)
    assert code == 1 and "PWNED" in out  # the answer, printed
    assert commands_in(out) == [] and commands_in(err) == []


# --- the Action ------------------------------------------------------------------------------------------------

def test_the_actions_log_runs_only_the_gates_own_commands(tmp_path, github, capsys, monkeypatch):
    """The Action on the same agent, with the hostile lines also printed on its stdout and stderr mid-run
    (any future echo of agent text): the group, the mask of the token and the breach annotation (whose
    message carries the agent's text, escaped as data) are processed; nothing else is."""
    from test_github_action import action_env

    from gate.github import action

    workspace = tmp_path / "workspace"
    (workspace / "agent").mkdir(parents=True)
    script_agent(workspace / "agent")
    real_run = action._run

    def echoing_run(*args):
        for stream in (sys.stdout, sys.stderr):
            stream.write("\n".join(HOSTILE + SNEAKY) + "\n")
        return real_run(*args)

    monkeypatch.setattr(action, "_run", echoing_run)
    assert action.run_action(action_env(tmp_path, workspace, github)) == 1
    captured = capsys.readouterr()
    assert captured.out.count("PWNED") >= len(HOSTILE)
    assert commands_in(captured.err) == []
    done = runner_processes(captured.err + captured.out)  # stderr's lines first, as the runner batches them
    names = [name for name, _, _ in done]
    assert set(names) <= {"add-mask", "group", "endgroup", "error", "warning", "notice"}
    assert names.index("group") < names.index("endgroup") and ("group", {}, "chaos-gate run") in done
    assert ("add-mask", {}, "ghs_app_token") in done and ("add-mask", {}, "x") not in done
    assert all("title" in props for name, props, _ in done if name in ("error", "warning", "notice"))
    [breach] = [data for name, props, data in done if name == "error"]
    assert breach.startswith("1 cell(s) breach 'no-pwned', e.g. contract/hi/baseline: ")
