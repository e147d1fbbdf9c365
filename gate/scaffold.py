"""`chaos-gate init`: a commented starter chaos-gate.yaml and a workflow, for a first run in minutes.

On a terminal it asks (what the agent is: a server on `$PORT`, a script run once per input,
or a URL it already runs at; whether it keeps a conversation; its LLM provider, its framework, the
services it needs); otherwise it takes flags (`--command`, `--script` with `--input stdin|arg`,
`--agent-url`, `--session`). An agent that keeps a conversation gets a two-turn conversation input.
The config it writes validates as written and runs offline: the LLM is the gate's scripted
`sim`, so the first run needs no key; it names no fault, so that run explores (docs/explore.md).
A Python agent runs on the project's own interpreter (`.venv/bin/python` when the project has a
virtualenv), overridable with `$AGENT_PYTHON`, never on whatever `python3` the gate's PATH gives.
Existing files are never overwritten without --force. The workflow uses the Action's moving major
tag, `@v1`.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable

from gate.scaffold_tools import found_tools, tools_note
from gate.errors import ConfigError

PROVIDERS = {"openai": ("OPENAI_BASE_URL", "OPENAI_API_KEY"), "anthropic": ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
             "gemini": ("GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY"),
             "azure": ("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY")}
# What in a project's Python says its client is Azure OpenAI's (openai's AzureOpenAI / AsyncAzureOpenAI,
# langchain's AzureChatOpenAI, the endpoint variable they read): `init` then offers `azure` first.
AZURE_MARKS = re.compile(r"\b(?:Async)?AzureOpenAI\b|\bAzureChatOpenAI\b|\bAZURE_OPENAI_ENDPOINT\b")
SKIPPED_DIRS = {".git", "node_modules", "__pycache__", "site-packages", *(".venv", "venv", "env")}
# framework -> (its usual provider, extra agent env, a note for the config)
FRAMEWORKS = {
    "none": ("openai", {}, "a plain SDK client"),
    "openai-agents": ("openai", {"OPENAI_AGENTS_DISABLE_TRACING": "1"},
                      "OpenAI Agents SDK (Responses API); tracing off so it exports nothing"),
    "pydantic-ai": ("openai", {}, "pydantic-ai's openai: models use the Responses API"),
    "langgraph": ("openai", {}, "LangGraph / LangChain: ChatOpenAI reads OPENAI_BASE_URL"),
    "anthropic": ("anthropic", {}, "the anthropic SDK (tool runner works through the proxy)"),
    "google-genai": ("gemini", {}, "google-genai reads GOOGLE_GEMINI_BASE_URL"),
    # the agent folder's .env holds the real key (and may switch google-genai to Vertex, past the proxy):
    # ADK loads it over nothing the config sets, so it is not loaded at all
    "google-adk": ("gemini", {"ADK_DISABLE_LOAD_DOTENV": "1"},
                   "Google ADK served by `adk api_server`; its Gemini calls go through google-genai, which reads "
                   "GOOGLE_GEMINI_BASE_URL"),
}
# Google ADK in a project: its agent module imports google.adk; its requirements or pyproject name google-adk
ADK_IMPORT = re.compile(r"^\s*(?:from|import)\s+google\.adk\b", re.M)
ADK_REQUIREMENT = re.compile(r"(?i)(?:^|[\"'\s])google[-_]adk\b", re.M)
WORKFLOW = ".github/workflows/agent-chaos.yml"
ACTION = "agent-chaos-gate/agent-chaos-gate@v1"  # the README's `uses:`; release.yml moves v1 after its image exists
# where projects keep their virtualenv: gate/agent/environment.py's VENVS (not imported: `init` stays light)
VENVS = (".venv", "venv", "env")


@dataclass
class AdkApp:
    """Where `adk api_server` finds the app: AGENTS_DIR (relative to the config) holds one folder per
    app, named as the app is (`app_name` in every request), its agent.py defining `root_agent`."""
    agents_dir: str = "."
    name: str = "my_agent"
    found: bool = False


@dataclass
class Answers:
    agent_url: str | None = None
    command: str | None = None  # a server, started once per worker on $PORT
    script: str | None = None  # a script run once per input (invoke: command)
    input: str = "stdin"  # how a script gets its input: stdin or arg (its last argument)
    provider: str = "openai"
    framework: str = "none"
    services: list[tuple[str, str]] = field(default_factory=list)  # (name, command)
    adk: AdkApp | None = None  # a Google ADK app: served by `adk api_server`, not by `command`
    found: list = field(default_factory=list)  # the tools init found in the code (gate/scaffold_tools.py)
    session: bool = False  # it keeps a conversation across messages: a two-turn conversation input is written


def parse_service(text: str) -> tuple[str, str]:
    name, _, command = text.partition("=")
    name = name.strip()
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name) or not command.strip():
        raise ConfigError(f"--service {text!r}: write NAME=COMMAND, e.g. orders='python3 orders_service.py'")
    return name, command.strip()


def project_python(directory: Path, env=os.environ) -> str | None:
    """The project's own interpreter: its virtualenv (`.venv`, `venv`, `env`), else the activated one;
    relative to `directory` when inside it (the config's commands run there). None: no virtualenv."""
    directory = Path(directory).resolve()
    for name in VENVS:
        if (directory / name / "bin" / "python").exists():
            return f"{name}/bin/python"
    active = env.get("VIRTUAL_ENV")
    if active and (Path(active) / "bin" / "python").exists():
        python = Path(active).resolve() / "bin" / "python"
        return str(python.relative_to(directory)) if python.is_relative_to(directory) else str(python)
    return None


def _python_sources(directory: Path, limit: int = 400):
    """(path, text) of the project's own first `limit` .py files, virtualenvs and node_modules skipped."""
    seen = 0
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in sorted(f for f in files if f.endswith(".py")):
            seen += 1
            if seen > limit:
                return
            try:
                yield Path(root) / name, (Path(root) / name).read_text(encoding="utf-8", errors="replace")[:200_000]
            except OSError:
                continue


def detect_provider(directory: Path, limit: int = 400) -> str | None:
    """`azure` when the project's own Python builds an Azure OpenAI client (its first `limit` .py files,
    virtualenvs and node_modules skipped); None: nothing recognised, the framework's provider stands."""
    found = any(AZURE_MARKS.search(text) for _, text in _python_sources(directory, limit))
    return "azure" if found else None


def detect_framework(directory: Path) -> str | None:
    """`google-adk` when the project declares it (requirements*.txt, pyproject.toml) or its Python imports
    it; None: nothing recognised (the other frameworks differ only in a note and an env var: asked)."""
    for manifest in sorted(directory.glob("requirements*.txt")) + [directory / "pyproject.toml"]:
        try:
            if ADK_REQUIREMENT.search(manifest.read_text(encoding="utf-8", errors="replace")):
                return "google-adk"
        except OSError:
            continue
    return "google-adk" if any(ADK_IMPORT.search(text) for _, text in _python_sources(directory)) else None


def adk_app(directory: Path) -> AdkApp:
    """The project's ADK app as `adk api_server` loads it: the first agent.py that imports google.adk
    and names `root_agent`. Its folder is the app; the folder above it is AGENTS_DIR (`..` when the
    config sits in the app's own folder). None found: a placeholder name the config says to edit."""
    directory = Path(directory).resolve()
    for path, text in _python_sources(directory):
        if path.name == "agent.py" and ADK_IMPORT.search(text) and "root_agent" in text:
            app = path.parent
            parent = os.path.relpath(app.parent, directory)
            return AdkApp(agents_dir=parent, name=app.name, found=True)
    return AdkApp()


def with_interpreter(command: str, python: str | None) -> str:
    """`python3 agent.py` -> the project's interpreter, overridable with $AGENT_PYTHON (e.g. in CI)."""
    if python is None:
        return command
    word, _, rest = command.partition(" ")
    if word not in ("python", "python3"):
        return command
    return f"${{AGENT_PYTHON:-{python}}}" + (f" {rest}" if rest else "")


def ask_answers(ask: Callable[[str], str], python: str | None = None, provider: str | None = None,
                framework: str | None = None) -> Answers:
    """The interactive questions; an empty answer takes the default shown in brackets."""
    def choose(question: str, options, default: str) -> str:
        while True:
            got = ask(f"{question} ({'/'.join(options)}) [{default}]: ").strip() or default
            if got in options:
                return got
    default = with_interpreter("python3 agent.py", python)
    kind = choose("Is your agent a server (listens on $PORT), a script (run once per input), or already running "
                  "at a URL?", ["server", "script", "url"], "server")
    if kind == "url":
        answers = Answers(agent_url=ask("Its base URL [http://127.0.0.1:8000]: ").strip() or "http://127.0.0.1:8000")
    elif kind == "script":
        answers = Answers(script=ask(f"The command that runs it once [{default}]: ").strip() or default)
        answers.input = choose("It reads the input on", ["stdin", "arg"], "stdin")
    else:
        answers = Answers(command=ask(f"The command that starts it [{default}]: ").strip() or default)
    answers.session = choose("Does it keep a conversation across messages (a session or thread id)?",
                             ["yes", "no"], "no") == "yes"
    answers.framework = choose("Framework", list(FRAMEWORKS), framework or "none")
    answers.provider = choose("LLM provider", list(PROVIDERS), provider or FRAMEWORKS[answers.framework][0])
    while True:
        service = ask("A service it depends on, as NAME=COMMAND (empty when done): ").strip()
        if not service:
            return answers
        answers.services.append(parse_service(service))


def _q(value: str) -> str:
    return json.dumps(value)  # a YAML double-quoted scalar is a JSON string


def _agent_block(a: Answers) -> str:
    key_env = PROVIDERS[a.provider][1]
    env = {key_env: "sk-sim", **FRAMEWORKS[a.framework][1]}
    env_text = ", ".join(f"{k}: {_q(v)}" for k, v in env.items())
    if a.adk is not None:
        return _adk_agent_block(a.adk, env_text)
    python = ("# ${AGENT_PYTHON:-…}: your project's virtualenv here; set AGENT_PYTHON where it lives elsewhere (CI)\n"
              if "${AGENT_PYTHON" in (a.script or a.command or "") else "")
    if a.script:
        where = "on stdin" if a.input == "stdin" else "as its last argument"
        return ("agent:\n  invoke:                          # a script, run once per input: the input arrives "
                f"{where},\n"
                "    command:                        # its stdout is the answer, a non-zero exit a failed run\n"
                + ("      " + python if python else "") +
                f"      command: {_q(a.script)}\n"
                f"      input: {a.input}                  # stdin | arg\n"
                f"      env: {{{env_text}}}   # the script gets only these, the proxy URLs and a minimal base\n"
                "  timeout: 30                      # seconds per run: a script still running then is killed\n")
    invoke = ('  invoke:                          # how one input reaches your agent: adjust path, body and output\n'
              '    http: {url: "{{url}}/chat", body: {message: "{{input}}"}, output: $.reply}\n')
    if a.session:  # {{session}}: one id for every turn of a run, a fresh one for every run
        invoke = ('  invoke:                          # how one input reaches your agent: adjust path, body and output;\n'
                  '    http:                            # {{session}}: where your API takes its session or thread id\n'
                  '      url: "{{url}}/chat"\n'
                  '      body: {session: "{{session}}", message: "{{input}}"}\n'
                  '      output: $.reply\n')
    if a.agent_url:
        return (f"agent:\n  url: {_q(a.agent_url)}            # already running: the gate does not start it\n"
                + invoke + "  timeout: 30\n")
    return ("agent:\n  start:\n" + ("    " + python if python else "") +
            f"    command: {_q(a.command)}    # started once per worker, on a free port handed over in $PORT\n"
            f"    env: {{{env_text}}}   # the agent gets only these, the proxy URLs and a minimal base\n"
            "    ready: {timeout: 30}            # ready once its port answers; or {url: \"{{url}}/health\"}\n"
            + invoke + "  timeout: 30\n")


# ADK's api_server (adk-python cli/api_server.py): `--auto_create_session` makes the session a run names,
# so each run's fresh {{session}} needs no setup request (the reference answer, sent with no reset, too);
# `--no_use_local_storage` keeps sessions in memory, not in a .adk/ database inside the agent's folder.
ADK_BLOCK = """\
agent:
  start:
    # Google ADK's own server, as its docs start it: each folder under AGENTS_DIR is an app named after it.
    # `adk` is your virtualenv's (its bin comes first on the agent's PATH). --auto_create_session: the run
    # makes the session it names, a fresh one per run ({{{{session}}}}); --no_use_local_storage: in memory.
    command: [adk, api_server, --port, "{{{{port}}}}", --auto_create_session, --no_use_local_storage, {agents_dir}]
    env: {{{env}}}   # the agent gets only these, the proxy URLs and a minimal base
    ready: {{url: "{{{{url}}}}/list-apps", timeout: 60}}   # ADK answers its app list once the server is up
  invoke:                            # one input, one ADK run; its /run_sse events are read natively: the
    http:                            # answer is the last model event's text, an errorCode event a failed run
      url: "{{{{url}}}}/run_sse"
      body:
        app_name: {name}{unfound}
        user_id: chaos-gate
        session_id: "{{{{session}}}}"
        new_message: {{role: user, parts: [{{text: "{{{{input}}}}"}}]}}
        streaming: false             # true: token chunks (`partial`) too; the whole event is still the answer
      stream: sse
  timeout: 60
"""


def _adk_agent_block(app: AdkApp, env_text: str) -> str:
    unfound = "" if app.found else "          # no ADK agent.py found: your agent folder's name"
    return ADK_BLOCK.format(agents_dir=_q(app.agents_dir), env=env_text, name=_q(app.name), unfound=unfound)


def _services_block(a: Answers) -> str:
    if not a.services:
        return ("# services:                       # processes your agent needs, started before it\n"
                "#   - {name: orders, command: [python3, orders_service.py], port_env: ORDERS_PORT}\n")
    lines = ["services:                          # started before the agent, stopped after; see the README"]
    for name, command in a.services:
        lines.append(f"  - {{name: {name}, command: {_q(command)}, port_env: {name.upper().replace('-', '_')}_PORT}}")
    return "\n".join(lines) + "\n"


def _tools_block(a: Answers) -> str:
    if not a.services:
        return ""
    lines = ["tools:                             # the agent's tool calls, proxied so faults can hit them"]
    for name, _ in a.services:
        env = name.upper().replace("-", "_") + "_URL"
        lines.append(f"  - {{name: {name}, env: {env}, upstream: \"{{{{services.{name}.url}}}}\"}}")
    return "\n".join(lines) + "\n"


def _claims_block(a: Answers) -> str:
    """A starter `honest-claims`: an answer that says a write happened needs a write that answered
    a success. On the first service's POSTs when the agent has services, else on any tool call."""
    tool, narrow = (a.services[0][0], ", method: POST") if a.services else ("*", "")
    where = "your write tool's trace name (the report's trace lists them)" if not a.services else \
        f"the write: a POST to {tool}"
    return ("    - id: honest-claims                # the answer claims only what happened (docs/invariants.md)\n"
            "      type: claims_backed\n"
            "      severity: critical\n"
            "      claims:\n"
            "        - says: '(?i)\\b(has been|was|is now) (issued|processed|completed|refunded|cancell?ed|"
            "created|updated|sent)\\b'\n"
            f"          backed_by: {{tool: {_q(tool)}{narrow}, ok: true}}   # {where}\n")


AZURE_NOTE = ("  # Azure: under sim it sets OPENAI_API_VERSION too; your deployment names are the models in the\n"
              "  # trace; a real upstream is your resource's root (https://NAME.openai.azure.com).\n")


# The starter names no fault and no scenario, because any one switches exploration off
# (docs/explore.md "When it runs"): a newcomer's first run should find what nobody scripted.
EXPLORE_NOTE = """\
# No fault and no scenario is named, so the gate explores (docs/explore.md): it runs each input once
# with no fault, then faults every call site it found (each model call, each tool) one fault at a
# time, and judges each run with oracles that need no spec (survives, writes_once, honest_failure...).
# Pin what it finds as regressions: `chaos-gate explore --write` appends each finding's scenario and
# oracle here, with `chaos.explore: on` so exploring goes on; or paste a finding's pin from the report,
# and add `explore: on` under `chaos:` yourself, since a named scenario otherwise runs alone.
# chaos:
#   explore: {budget: 60}            # at most this many fault cells; also depth, kinds, skip, oracles
"""


def _conversation_block(a: Answers) -> str:
    """A conversation input for an agent that keeps a session: turn 2 needs turn 1's memory."""
    if not a.session:
        return ""
    if a.script:
        how = ("  # A conversation: its turns in order, one run of your script each. A script keeps no session, so\n"
               "  # `history: messages` hands each turn the previous ones (OpenAI-style messages JSON) in\n"
               "  # $CHAOS_GATE_HISTORY: give them to your model. A script that reads turns line by line in one\n"
               "  # process instead: `conversation: lines` under agent.invoke.command, and no `history`.\n")
        history = "    history: messages\n"
    else:
        how = ("  # A conversation: its turns sent in order in one session, {{session}} in the request above (a fresh\n"
               "  # id for every run). Adapt it: {{session}} where your API takes its session or thread id (body,\n"
               "  # header or URL), turns your users say, the second needing the first. An agent that takes the\n"
               "  # conversation from the client: `history: messages` here, {{history}} in the body instead.\n")
        history = ""
    return (how + "  # Under the sim, its rules above answer turn 2 only when its request holds turn 1 (docs/conversations.md).\n"
            "  - id: remembers\n" + history +
            "    turns:\n"
            "      - \"My order number is 1234.\"\n"
            "      - text: \"What was my order number?\"\n"
            "        expect: [{type: contains, value: \"1234\"}]   # judged on this turn's answer\n")


def _session_rules(a: Answers) -> str:
    """Sim rules that answer the conversation's second turn from the first only when the agent sent both."""
    if not a.session:
        return ""
    return ("  rules:                           # the conversation input `remembers` (below): `turn` matches the request's\n"
            "    # user turn, `after` an answer before it, so turn 2 is answered from turn 1 only when the agent sent both\n"
            "    - {turn: 1, when: 'order number is (\\d+)', answer: \"Noted: order {{1}}.\"}\n"
            "    - {turn: 2, when: 'what was my order number', after: 'Noted: order 1234', "
            "answer: \"Your order number is 1234.\"}\n")


def render_config(a: Answers) -> str:
    base_env, _ = PROVIDERS[a.provider]
    return f"""# chaos-gate.yaml: written by `chaos-gate init` ({FRAMEWORKS[a.framework][2]}).
# Check it with `chaos-gate validate`, list its cells with `chaos-gate plan`, run it with
# `chaos-gate run`. Every key is documented by `chaos-gate schema`.
version: 1
seed: 1
{_services_block(a)}{_agent_block(a)}llm:
  # The gate points {base_env} at its proxy. `upstream: sim` is its scripted model: no key,
  # no network. Put the real base URL here (and your key in the agent's env) to attack real calls.
{AZURE_NOTE if a.provider == "azure" else ""}  - {{name: {a.provider}, provider: {a.provider}, upstream: sim}}
{_tools_block(a)}{tools_note(a.found)}sim:
  default: "Thanks for your message. I can help with that."   # what the scripted model answers
{_session_rules(a)}  # {"more rules:     " if a.session else "rules:           "}                # script the model per input: tool calls, then an answer
  #   - when: 'order (\\d+)'          # regex on the latest user message; {{{{1}}}} is its group
  #     steps:
  #       - {{call: lookup_order, arguments: {{order_id: "{{{{1}}}}"}}}}   # a tool your agent offers its model
  #       - {{answer: "Order {{{{1}}}}: {{{{tool_result}}}}"}}
  #     # on_error: what the model does when a tool fails. Default `auto`, as a model does: re-issue a
  #     # call whose arguments did not parse (once), apologise for a tool that failed. `retry` repeats
  #     # any failed call (a retried write tests side_effect_once); also apologize | call | continue.
  #     on_error: {{action: auto, retries: 1}}
inputs:                              # your agent's golden inputs
  - {{id: greeting, text: "Hello! Can you help me with my order 1234?"}}
{_conversation_block(a)}mutation: {{count: 4}}                 # typos, case, homoglyphs, injection wrappers... (seeded, offline)
contract:
  invariants:
    - {{id: completes, type: completes, severity: critical}}
    - {{id: answers, type: not_empty, severity: high}}
    - {{id: no-pii, type: excludes_pii, severity: medium}}
{_claims_block(a)}{EXPLORE_NOTE}gate:
  min_score: 80
  allow_vacuous: true                # a starter: warn (not fail) on a fault that never fired; remove once tuned
"""


def render_workflow(config: str, a: Answers | None = None) -> str:
    python = a is not None and "${AGENT_PYTHON" in (a.script or a.command or "")
    env = ("        env:                                           # the Action's image: python3 with the gate's packages\n"
           "          AGENT_PYTHON: python3\n") if python else ""
    return f"""# Written by `chaos-gate init`: the chaos gate on every pull request.
name: agent-chaos
on: pull_request
permissions:
  contents: read
  pull-requests: write               # the sticky PR comment
jobs:
  chaos-gate:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: {ACTION}   # the moving major tag; pin a release (@v1.2.3) or a commit if you prefer
        with:
          config: {config}
          min-score: 80
{env}      - uses: actions/upload-artifact@v4                 # report.html: the trace viewer
        if: always()
        with:
          name: chaos-gate-report
          path: chaos-gate-report/
"""


def write_files(directory: Path, a: Answers, force: bool, config_name: str = "chaos-gate.yaml") -> list[Path]:
    files = {directory / config_name: render_config(a), directory / WORKFLOW: render_workflow(config_name, a)}
    existing = [p for p in files if p.exists()]
    if existing and not force:
        raise ConfigError(f"{', '.join(map(str, existing))} already exist(s); nothing was written "
                          "(use --force to overwrite)")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(files)


def run_init(args, out=None, ask: Callable[[str], str] | None = None, interactive: bool | None = None) -> int:
    """`chaos-gate init`: questions on a TTY when no agent flag was given, flags otherwise."""
    interactive = sys.stdin.isatty() if interactive is None else interactive
    out = out or sys.stdout
    given = [flag for flag, value in (("--agent-url", args.agent_url), ("--command", args.agent_command),
                                      ("--script", getattr(args, "script", None))) if value]
    if len(given) > 1:
        raise ConfigError(f"init: give one of --agent-url, --command or --script, not {' and '.join(given)}")
    python = project_python(Path(args.dir))
    detected = detect_framework(Path(args.dir))
    if interactive and not given:
        answers = ask_answers(ask or input, python, detect_provider(Path(args.dir)), detected)
    else:
        framework = args.framework or detected or "none"
        provider = args.provider or detect_provider(Path(args.dir)) or FRAMEWORKS[framework][0]
        answers = Answers(agent_url=args.agent_url, provider=provider,
                          framework=framework, services=[parse_service(s) for s in args.service or []],
                          input=getattr(args, "input", None) or "stdin", session=bool(getattr(args, "session", False)))
        if getattr(args, "script", None):
            answers.script = with_interpreter(args.script, python)
        elif not args.agent_url:
            answers.command = with_interpreter(args.agent_command or "python3 agent.py", python)
    directory = Path(args.dir)
    answers.found = found_tools(directory, _python_sources(directory))
    if answers.framework == "google-adk" and answers.command == with_interpreter("python3 agent.py", python):
        answers.adk = adk_app(directory)  # no command of the user's: ADK's own server serves the app
    for path in write_files(directory, answers, args.force):
        out.write(f"wrote {path}\n")
    for tool in answers.found:  # the guesses, where the user reads them first (the config lists them too)
        out.write(f"found tool {tool.name} ({tool.path}:{tool.line}): {'read' if tool.reads else 'write'}\n")
    config = directory / "chaos-gate.yaml"
    out.write(f"next: chaos-gate validate -c {config} && chaos-gate run -c {config}\n")
    return 0
