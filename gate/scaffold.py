"""`chaos-gate init`: a commented starter chaos-gate.yaml and a workflow, for a first run in minutes.

On a terminal it asks (how the agent is reached, its LLM provider, its framework, the
services it needs); otherwise it takes flags. The config it writes validates as written
and runs offline: the LLM is the gate's scripted `sim`, so the first run needs no key.
Existing files are never overwritten without --force.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from gate.errors import ConfigError

PROVIDERS = {"openai": ("OPENAI_BASE_URL", "OPENAI_API_KEY"), "anthropic": ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
             "gemini": ("GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY")}
# framework -> (its usual provider, extra agent env, a note for the config)
FRAMEWORKS = {
    "none": ("openai", {}, "a plain SDK client"),
    "openai-agents": ("openai", {"OPENAI_AGENTS_DISABLE_TRACING": "1"},
                      "OpenAI Agents SDK (Responses API); tracing off so it exports nothing"),
    "pydantic-ai": ("openai", {}, "pydantic-ai's openai: models use the Responses API"),
    "langgraph": ("openai", {}, "LangGraph / LangChain: ChatOpenAI reads OPENAI_BASE_URL"),
    "anthropic": ("anthropic", {}, "the anthropic SDK (tool runner works through the proxy)"),
    "google-genai": ("gemini", {}, "google-genai reads GOOGLE_GEMINI_BASE_URL"),
}
WORKFLOW = ".github/workflows/agent-chaos.yml"


@dataclass
class Answers:
    agent_url: str | None = None
    command: str | None = None
    provider: str = "openai"
    framework: str = "none"
    services: list[tuple[str, str]] = field(default_factory=list)  # (name, command)


def parse_service(text: str) -> tuple[str, str]:
    name, _, command = text.partition("=")
    name = name.strip()
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name) or not command.strip():
        raise ConfigError(f"--service {text!r}: write NAME=COMMAND, e.g. orders='python3 orders_service.py'")
    return name, command.strip()


def ask_answers(ask: Callable[[str], str]) -> Answers:
    """The interactive questions; an empty answer takes the default shown in brackets."""
    def choose(question: str, options, default: str) -> str:
        while True:
            got = ask(f"{question} ({'/'.join(options)}) [{default}]: ").strip() or default
            if got in options:
                return got
    how = ask("How is your agent reached: a command that starts it, or the URL it already runs at? "
              "[python3 agent.py]: ").strip() or "python3 agent.py"
    answers = Answers(**({"agent_url": how} if re.match(r"https?://", how) else {"command": how}))
    answers.framework = choose("Framework", list(FRAMEWORKS), "none")
    answers.provider = choose("LLM provider", list(PROVIDERS), FRAMEWORKS[answers.framework][0])
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
    invoke = ('  invoke:                          # how one input reaches your agent: adjust path, body and output\n'
              '    http: {url: "{{url}}/chat", body: {message: "{{input}}"}, output: $.reply}\n')
    if a.agent_url:
        return (f"agent:\n  url: {_q(a.agent_url)}            # already running: the gate does not start it\n"
                + invoke + "  timeout: 30\n")
    return ("agent:\n  start:\n"
            f"    command: {_q(a.command)}    # started once per worker, on a free port handed over in $PORT\n"
            f"    env: {{{env_text}}}   # the agent gets only these, the proxy URLs and a minimal base\n"
            "    ready: {timeout: 30}            # ready once its port answers; or {url: \"{{url}}/health\"}\n"
            + invoke + "  timeout: 30\n")


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
  - {{name: {a.provider}, provider: {a.provider}, upstream: sim}}
{_tools_block(a)}sim:
  default: "Thanks for your message. I can help with that."   # what the scripted model answers
  # rules:                           # script the model per input: tool calls, then an answer
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
mutation: {{count: 4}}                 # typos, case, homoglyphs, injection wrappers... (seeded, offline)
contract:
  invariants:
    - {{id: completes, type: completes, severity: critical}}
    - {{id: answers, type: not_empty, severity: high}}
    - {{id: no-pii, type: excludes_pii, severity: medium}}
  scenarios:                         # faults on the agent's own LLM calls
    - name: rate_limited
      faults: [{{kind: rate_limit, target: llm, on_calls: [1], retry_after: 0.5}}]
    - name: outage
      faults: [{{kind: server_error, target: llm, on_calls: [1], status: 503}}]
gate:
  min_score: 80
  allow_vacuous: true                # a starter: warn (not fail) on a fault that never fired; remove once tuned
"""


def render_workflow(config: str) -> str:
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
      - uses: agent-chaos-gate/agent-chaos-gate@v0.1.0   # or pin the image by digest (README)
        with:
          config: {config}
          min-score: 80
      - uses: actions/upload-artifact@v4                 # report.html: the trace viewer
        if: always()
        with:
          name: chaos-gate-report
          path: chaos-gate-report/
"""


def write_files(directory: Path, a: Answers, force: bool, config_name: str = "chaos-gate.yaml") -> list[Path]:
    files = {directory / config_name: render_config(a), directory / WORKFLOW: render_workflow(config_name)}
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
    if args.agent_url and args.agent_command:
        raise ConfigError("init: give --agent-url or --command, not both")
    if interactive and not (args.agent_url or args.agent_command):
        answers = ask_answers(ask or input)
    else:
        framework = args.framework or "none"
        answers = Answers(agent_url=args.agent_url, command=args.agent_command or "python3 agent.py",
                          provider=args.provider or FRAMEWORKS[framework][0], framework=framework,
                          services=[parse_service(s) for s in args.service or []])
        if args.agent_url:
            answers.command = None
    directory = Path(args.dir)
    for path in write_files(directory, answers, args.force):
        out.write(f"wrote {path}\n")
    config = directory / "chaos-gate.yaml"
    out.write(f"next: chaos-gate validate -c {config} && chaos-gate run -c {config}\n")
    return 0
