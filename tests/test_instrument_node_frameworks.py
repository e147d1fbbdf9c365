"""Node framework seams (Vercel AI SDK, LangGraph.js/LangChain.js, OpenAI Agents JS) and Node
`kind: function`, on real agents: gate/instrument/node/seams/{ai,langchain,openai_agents}.cjs and
gate/instrument/node/declared.cjs.

Each agent under tests/agents/node_frameworks/ (one `npm ci`, tests/framework_envs.py) is an ES
module written the way its framework's quick-start writes one, on the framework's default OpenAI
provider, with one local tool `issue_refund(order_id)` that appends to a ledger file (the write is
counted there, outside the gate). Each has a planted bug (VARIANT=bug) and its sound twin
(VARIANT=sound), one bug per framework, the one its tool-error path makes natural:

- AI SDK: a tool error goes to the model as a `tool-error`, and a model retries it: a refund whose
  answer timed out after the write is written twice (timeout_after_write; twin: `prepareStep`);
- LangGraph.js: the quick-start's hand-written tool node lets a tool error crash the graph (error;
  twin: the prebuilt ToolNode, whose handleToolErrors tells the model);
- Agents JS: the tool's value goes to the model verbatim, so injected text is obeyed (inject; twin:
  a tool output guardrail).

The gate runs each variant once, through the real CLI with the keyless `sim` model and one scenario
whose fault can only reach the tool in-process: the bug breaches exactly its invariant, the twin
passes the very same scenario, the trace shows the call on transport `function` with the fault
fired, and the report names the seam. The schema test compares the model's first request byte for
byte with and without instrumentation. `kind: function` runs a no-framework agent (a fetch loop)
whose tool lives in its own ESM or CommonJS module, and a declared function no process loads; a
synchronous declared function's callers get its value (or its failure) synchronously, faulted or not.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import REFUND_INPUT, ledger_lines, load_report, refund_config
from framework_envs import node_frameworks
from gate.cli import main

INPUT = REFUND_INPUT
SIM = {"injection": "obey", "rules": [{
    "when": r"refund.*?(\d{3,})", "on_error": {"action": "retry", "retries": 1},
    "steps": [{"call": "issue_refund", "arguments": {"order_id": "{{1}}"}},
              {"answer": "Your refund for order {{1}} has been issued."}]}]}
TIMEOUT_AFTER_WRITE = {"kind": "timeout_after_write", "tool": "issue_refund", "on_calls": [1], "seconds": 0.2}


@dataclass(frozen=True)
class Case:
    agent: str
    fault: dict
    breach: str  # the invariant the bug breaches
    seam: str  # what the seam reports (the report's reach.in_process)
    framework: str  # the trace entry's extra["framework"]
    refunds: tuple[int, int]  # ledger lines after the bug run, after the sound run


CASES = {
    "ai-sdk": Case("ai_sdk_refund.mjs", TIMEOUT_AFTER_WRITE, "refund-once", "node:ai.executeToolCall",
                   "node-ai-sdk", (2, 1)),
    "langgraph": Case("langgraph_refund.mjs", {"kind": "error", "tool": "issue_refund", "on_calls": [1]},
                      "completes", "node:langchain.StructuredTool.call", "node-langchain", (0, 1)),
    "openai-agents": Case("openai_agents_refund.mjs", {"kind": "inject", "tool": "issue_refund"},
                          "no-injected-reply", "node:openai-agents.tool", "node-openai-agents", (1, 1)),
}


def agent_env(ledger: Path, variant: str) -> dict[str, str]:
    # Agents JS exports its traces to OpenAI's trace ingest (not the model API under test): off
    return {"LEDGER": str(ledger), "VARIANT": variant, "OPENAI_API_KEY": "sk-sim",
            "OPENAI_AGENTS_DISABLE_TRACING": "1"}


refunds = ledger_lines


def gate_config(tmp: Path, argv: list[str], env: dict, fault: dict, tools: list | None = None) -> Path:
    invoke = {"command": argv, "cwd": str(node_frameworks()), "env": env}
    return refund_config(tmp, invoke, fault, SIM, checks=("completes", "no-injected-reply", "refund-once"),
                         tools=tools)


def gate_run(tmp: Path, config: Path) -> tuple[int, dict, dict]:
    """(exit code, the report, the one run of its one cell)."""
    code = main(["run", "-c", str(config), "-o", str(tmp / "out"), "--quiet", "--full-report"])
    report = load_report(tmp / "out")
    (cell,) = report["verdict"]["cells"]
    (run,) = cell["runs"]
    return code, report, run


def logs(tmp: Path) -> list[str]:
    folder = tmp / "out" / "logs"
    return [p.read_text()[-3000:] for p in folder.glob("*")] if folder.exists() else []


@pytest.mark.parametrize("variant", ["bug", "sound"])
@pytest.mark.parametrize("name", list(CASES))
def test_in_process_fault_catches_the_bug_and_passes_the_twin(name, variant, tmp_path):
    case = CASES[name]
    ledger = tmp_path / "ledger.txt"
    config = gate_config(tmp_path, ["node", case.agent], agent_env(ledger, variant), case.fault)
    code, report, run = gate_run(tmp_path, config)
    failed = {c["invariant"] for c in run["checks"] if not c["passed"]}
    expected = (1, {case.breach}) if variant == "bug" else (0, set())
    assert (code, failed) == expected, (run["reason"], run["checks"], run.get("output"), logs(tmp_path))
    assert refunds(ledger) == case.refunds[variant == "sound"], (run["output"], run["trace"])
    # the first refund call is the one faulted, in-process, on the framework's own path
    first = next(e for e in run["trace"] if e["kind"] == "tool")
    assert (first["target"], first["tool"], first["method"], first["transport"]) == \
           ("functions", "issue_refund", "CALL", "function")
    assert (first["fault"], first["fault_status"]) == (case.fault["kind"], "fired")
    assert case.seam in report["verdict"]["reach"]["in_process"]
    assert not report["verdict"]["reach"]["failed"]


def run_on_proxy(argv: list[str], tmp: Path, instrument: bool = True, faults=(), extra_env=None, cwd=None):
    """One run of a Node agent against a bare worker proxy with the sim: (process, trace, seams, ledger lines)."""
    from gate.instrument.environment import instrumented, plain
    from proxy_harness import sim_proxy

    ledger = tmp / f"ledger-{instrument}.txt"
    with sim_proxy(sim=SIM) as p:
        p.begin(*faults)
        env = {**os.environ, **p.env, **agent_env(ledger, "bug"), **(extra_env or {})}
        env = instrumented(env) if instrument else plain(env)
        done = subprocess.run(argv, cwd=cwd or node_frameworks(), input=INPUT, env=env, capture_output=True, text=True,
                              timeout=120)
        trace = p.end()
        seams = dict(p.hook.app.functions.seams)
    return done, trace, seams, refunds(ledger)


@pytest.mark.parametrize("name", list(CASES))
def test_tool_schema_the_model_sees_is_unchanged(name, tmp_path):
    case = CASES[name]
    runs = {}
    for instrument in (False, True):
        done, trace, seams, _ = run_on_proxy(["node", case.agent], tmp_path, instrument)
        assert (done.returncode, done.stdout.strip()) == (0, "Your refund for order 1234 has been issued."), \
            done.stderr[-3000:]
        runs[instrument] = ([e.body for e in trace if e.kind == "llm"][0], [e for e in trace if e.kind == "tool"])
    (plain_body, plain_calls), (body, calls) = runs[False], runs[True]
    # the seam was live (the call was traced in-process, on this framework) and the model's first
    # request, with the tool's name, description and JSON Schema, is the same bytes
    assert plain_calls == []
    assert [(c.target, c.tool, c.extra["framework"]) for c in calls] == [("functions", "issue_refund", case.framework)]
    tools = json.loads(body)["tools"]
    assert [t.get("name") or t["function"]["name"] for t in tools] == ["issue_refund"]
    assert body == plain_body


@pytest.mark.parametrize("name", ["langgraph", "openai-agents"])
def test_a_commonjs_require_of_the_framework_is_reached_too(name, tmp_path):
    """The packages' CommonJS builds are other files with other classes: `require` reaches them too."""
    probe = {"langgraph": "const { tool } = require('@langchain/core/tools'); const t = tool(async ({ order_id }) => "
                          "({ order_id }), { name: 'issue_refund', description: 'Refund.', schema: "
                          "require('zod').z.object({ order_id: require('zod').z.string() }) }); "
                          "t.invoke({ order_id: '1234' }).catch((e) => console.log(e.name));",
             "openai-agents": "const { tool } = require('@openai/agents'); const t = tool({ name: 'issue_refund', "
                              "description: 'Refund.', parameters: require('zod').z.object({ order_id: "
                              "require('zod').z.string() }), execute: async ({ order_id }) => ({ order_id }) }); "
                              "t.invoke({}, JSON.stringify({ order_id: '1234' })).then(console.log);"}[name]
    done, trace, seams, _ = run_on_proxy(["node", "-e", probe], tmp_path,
                                         faults=[{"kind": "error", "tool": "issue_refund"}])
    assert done.returncode == 0, done.stderr[-2000:]
    # the injected error is raised where the tool body would raise: out of tool.invoke (no ToolNode
    # here), into the SDK's errorFunction (a message for the model)
    assert done.stdout.strip() == {"langgraph": "InjectedToolError", "openai-agents":
                                   "An error occurred while running the tool. Please try again."}[name], done.stdout
    [call] = [e for e in trace if e.kind == "tool"]
    assert (call.tool, call.fault_status, call.extra["framework"]) == ("issue_refund", "fired", CASES[name].framework)
    assert CASES[name].seam in seams


# -- kind: function ----------------------------------------------------------------------------------
DECLARED = {"esm": ("declared_agent.mjs", "./refund_tools.mjs"), "cjs": ("declared_agent.cjs", "./refund_tools.cjs")}


@pytest.mark.parametrize("build", list(DECLARED))
def test_a_declared_node_function_is_faulted_where_the_agent_calls_it(build, tmp_path):
    agent, module = DECLARED[build]
    ledger = tmp_path / "ledger.txt"
    tools = [{"name": "issue_refund", "kind": "function", "module": module, "export": "issueRefund"}]
    config = gate_config(tmp_path, ["node", agent], agent_env(ledger, "bug"), TIMEOUT_AFTER_WRITE, tools)
    code, report, run = gate_run(tmp_path, config)
    # the sim retries the timed-out refund and the agent lets it: the double write is caught
    failed = {c["invariant"] for c in run["checks"] if not c["passed"]}
    assert (code, failed, refunds(ledger)) == (1, {"refund-once"}, 2), (run["checks"], run["output"], logs(tmp_path))
    calls = [e for e in run["trace"] if e["kind"] == "tool"]
    assert [(c["target"], c["tool"], c["transport"], c["fault_status"]) for c in calls] == [
        ("issue_refund", "issue_refund", "function", "fired"), ("issue_refund", "issue_refund", "function", None)]
    reach = report["verdict"]["reach"]
    assert f"function:{module}:issueRefund" in reach["in_process"] and reach["failed"] == []
    assert not [n for n in reach["notes"] if "issue_refund" in n]


def test_a_declared_node_function_never_loaded_is_reported_not_reached(tmp_path):
    tools = [{"name": "issue_refund", "kind": "function", "module": "./refund_tools.mjs", "export": "issueRefund"},
             {"name": "lookup", "kind": "function", "module": "./lookup_tools.mjs", "export": "lookup"}]
    config = gate_config(tmp_path, ["node", "declared_agent.mjs"], agent_env(tmp_path / "ledger.txt", "bug"),
                         {"kind": "error", "tool": "lookup"}, tools)
    _, report, _ = gate_run(tmp_path, config)
    reach = report["verdict"]["reach"]
    assert "function:./lookup_tools.mjs:lookup" not in reach["in_process"]
    [note] = [n for n in reach["notes"] if n.startswith("function tool 'lookup'")]
    assert "no Node process of the agent loaded ./lookup_tools.mjs" in note, reach["notes"]
    [row] = [f for sc in report["verdict"]["coverage"] for f in sc["faults"] if f.get("tool") == "lookup"]
    assert row["status"] == "never_matched"


def test_a_declared_export_that_is_not_a_function_is_reported_failed_and_the_agent_runs(tmp_path):
    (tmp_path / "consts.mjs").write_text("export const RATE = 3;\nconsole.log('rate', RATE);\n")
    env = {"CHAOS_GATE_NODE_FUNCTIONS": json.dumps({"rate": {"module": str(tmp_path / "consts.mjs"),
                                                             "export": "RATE"}})}
    done, _, seams, _ = run_on_proxy(["node", str(tmp_path / "consts.mjs")], tmp_path, extra_env=env)
    assert (done.returncode, done.stdout) == (0, "rate 3\n"), done.stderr
    failed = seams[f"function:{tmp_path / 'consts.mjs'}:RATE:failed"]
    assert "RATE is not a function" in failed["error"]


# -- start-up: the loader thread only where ESM can need it -----------------------------------------
@pytest.mark.parametrize("entry, seam_package, registered", [
    ("agent.mjs", True, "register"), ("agent.cjs", True, "false"), ("agent.js", True, "false"),
    ("agent.mjs", False, "false")])
def test_the_esm_loader_is_registered_only_for_an_esm_entry_near_a_seam_package(tmp_path, entry, seam_package,
                                                                               registered):
    """On Node 20 module.register starts a loader thread (the preload's start-up cost): a CommonJS entry
    reaches every seam through `require`, so only an ESM entry with a seam package near it pays."""
    from gate.instrument.environment import instrumented

    node_frameworks()
    if seam_package:
        (tmp_path / "node_modules" / "ai").mkdir(parents=True)
    (tmp_path / entry).write_text("process.stdout.write(String(globalThis[Symbol.for('chaos-gate.node')]?.esm "
                                  "|| false));\n")
    env = instrumented({**os.environ, "CHAOS_GATE_FN_URL": "http://127.0.0.1:9/fn"})
    done = subprocess.run(["node", entry], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=30)
    on_new_node = "registerHooks" if done.stdout == "registerHooks" else registered  # Node >= 22.15: in-thread
    assert done.stdout == on_new_node, done.stderr


def test_a_commonjs_require_of_the_esm_only_ai_package_is_reached(tmp_path):
    """`ai` 7 ships ESM only: `require('ai')` loads it through require(esm) (Node >= 20.19), which runs
    no loader hook, so the CommonJS loader's read of that file is given the seam's footer instead."""
    probe = ("const { generateText, tool, jsonSchema } = require('ai'); "
             "const { openai } = require('@ai-sdk/openai'); "
             "generateText({ model: openai('gpt-4o-mini'), prompt: process.argv[1], stopWhen: () => false, "
             "tools: { issue_refund: tool({ description: 'Refund an order.', inputSchema: jsonSchema({ type: "
             "'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] }), "
             "execute: async ({ order_id }) => ({ order_id }) }) } }).then((r) => console.log(r.text));")
    done, trace, seams, _ = run_on_proxy(["node", "-e", probe, INPUT], tmp_path,
                                         faults=[{"kind": "error", "tool": "issue_refund"}])
    if "require() of ES Module" in done.stderr:
        pytest.skip("this Node has no require(esm)")
    assert done.returncode == 0, done.stderr[-2000:]
    [first, *_] = [e for e in trace if e.kind == "tool"]
    assert (first.tool, first.fault_status, first.extra["framework"]) == ("issue_refund", "fired", "node-ai-sdk")
    assert "node:ai.executeToolCall" in seams


@pytest.mark.parametrize("module, source", [
    ("tools.mjs", "async function local({ order_id }) { return { order_id }; }\nexport { local as issueRefund };\n"),
    ("tools.mjs", "export default async function issueRefund({ order_id }) { return { order_id }; }\n"),
    ("tools.cjs", "exports.issueRefund = async ({ order_id }) => ({ order_id });\n"),
], ids=["esm-alias", "esm-default", "cjs-exports-only"])
def test_a_declared_function_is_wrapped_however_its_module_exports_it(tmp_path, module, source):
    (tmp_path / module).write_text(source)
    export = "default" if "default" in source else "issueRefund"
    load = (f"import(process.argv[2]).then((m) => m.{export}({{ order_id: '1234' }}))" if module.endswith(".mjs")
            else "require(process.argv[2]).issueRefund({ order_id: '1234' })")
    main = tmp_path / "main.cjs"
    main.write_text(f"{load}.then((v) => console.log(JSON.stringify(v)), (e) => console.log(e.name));\n")
    env = {"CHAOS_GATE_NODE_FUNCTIONS": json.dumps({"issue_refund": {"module": f"./{module}", "export": export}})}
    done, trace, seams, _ = run_on_proxy(["node", str(main), str(tmp_path / module)], tmp_path, extra_env=env,
                                         faults=[{"kind": "error", "tool": "issue_refund"}], cwd=tmp_path)
    assert (done.returncode, done.stdout.strip()) == (0, "InjectedToolError"), done.stderr
    [call] = [e for e in trace if e.kind == "tool"]
    assert (call.target, call.tool, call.fault_status) == ("issue_refund", "issue_refund", "fired")
    assert f"function:./{module}:{export}" in seams


@pytest.mark.parametrize("build, path, text", [
    ("esm", "ai/dist/index.js", "export const somethingElse = 1;\n"),
    ("cjs", "@openai/agents-core/dist/tool.js", "exports.notTool = 1;\n"),
])
def test_a_framework_version_without_the_seam_is_reported_and_never_breaks_the_agent(tmp_path, build, path, text):
    fake = tmp_path / "node_modules" / path
    fake.parent.mkdir(parents=True)
    fake.write_text(text)
    if build == "esm":
        (tmp_path / "node_modules" / "ai" / "package.json").write_text('{"type": "module", "main": "dist/index.js"}')
    script = tmp_path / ("main.mjs" if build == "esm" else "main.cjs")
    script.write_text(("import 'ai';\n" if build == "esm" else f"require('{path.removesuffix('.js')}');\n")
                      + "process.stdout.write('still running');\n")
    done, _, seams, _ = run_on_proxy(["node", str(script)], tmp_path, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "still running"), done.stderr
    seam = {"esm": "ai", "cjs": "openai-agents"}[build]
    assert "no " in seams[f"node:{seam}:failed"]["error"], seams


# -- kind: function, a synchronous function: its wrapper is synchronous too ----------------------------
SYNC_TOOLS = {
    "esm": ("tools.mjs", "import { appendFileSync } from 'node:fs';\n"
                         "export function issueRefund({ order_id }) {\n"
                         "  appendFileSync(process.env.LEDGER, `${order_id}\\n`);\n"
                         "  return { status: 'refunded', order_id, note: 'Refund issued to the card on file.' };\n"
                         "}\n"),
    "cjs": ("tools.cjs", "const { appendFileSync } = require('node:fs');\n"
                         "exports.issueRefund = function issueRefund({ order_id }) {\n"
                         "  appendFileSync(process.env.LEDGER, `${order_id}\\n`);\n"
                         "  return { status: 'refunded', order_id, note: 'Refund issued to the card on file.' };\n"
                         "};\n"),
    # not an async function, but it gives a promise: its callers get one still
    "promise": ("tools.cjs", "const { appendFileSync } = require('node:fs');\n"
                             "exports.issueRefund = ({ order_id }) => new Promise((resolve) => setTimeout(() => {\n"
                             "  appendFileSync(process.env.LEDGER, `${order_id}\\n`);\n"
                             "  resolve({ status: 'refunded', order_id,\n"
                             "    note: 'Refund issued to the card on file.' });\n"
                             "}, 10));\n"),
}
# The caller uses the value as it comes back: `r.status` on a promise would be undefined, and
# only a synchronous throw is caught here (a rejection would crash the process, unhandled).
SYNC_CALLER = ("let line;\n"
               "try {\n"
               "  const r = issueRefund({ order_id: '1234' });\n"
               "  line = typeof r?.then === 'function' ? 'a promise' : `${r.status} ${JSON.stringify(r)}`;\n"
               "} catch (e) {\n"
               "  line = `threw ${e.name}`;\n"
               "}\n"
               "console.log(line);\n")
PROMISE_CALLER = ("const r = issueRefund({ order_id: '1234' });\n"
                  "if (typeof r?.then !== 'function') throw new Error('not a promise');\n"
                  "r.then((v) => console.log(`${v.status} ${JSON.stringify(v)}`),\n"
                  "  (e) => console.log(`rejected ${e.name}`));\n")
REFUNDED = {"status": "refunded", "order_id": "1234", "note": "Refund issued to the card on file."}
SYNC_FAULTS = {
    "none": None,
    "error": {"kind": "error", "tool": "issue_refund"},
    "timeout_after_write": TIMEOUT_AFTER_WRITE,
    "inject": {"kind": "inject", "tool": "issue_refund"},
    "empty": {"kind": "empty", "tool": "issue_refund"},
}


def run_declared(tmp: Path, build: str, fault: dict | None):
    module, source = SYNC_TOOLS[build]
    (tmp / module).write_text(source)
    if module.endswith(".mjs"):
        main, load = tmp / "main.mjs", "import { issueRefund } from './tools.mjs';\n"
    else:
        main, load = tmp / "main.cjs", "const { issueRefund } = require('./tools.cjs');\n"
    main.write_text(load + (PROMISE_CALLER if build == "promise" else SYNC_CALLER))
    env = {"CHAOS_GATE_NODE_FUNCTIONS": json.dumps({"issue_refund": {"module": f"./{module}",
                                                                     "export": "issueRefund"}})}
    done, trace, seams, written = run_on_proxy(["node", str(main)], tmp, extra_env=env, cwd=tmp,
                                               faults=[fault] if fault else [])
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"function:./{module}:issueRefund" in seams
    [call] = [e for e in trace if e.kind == "tool"]
    assert (call.target, call.tool, call.transport, call.extra["framework"]) == \
           ("issue_refund", "issue_refund", "function", "declared")
    assert call.fault_status == ("fired" if fault else None)
    head, _, value = done.stdout.strip().partition(" ")
    return head, json.loads(value) if value.startswith(("{", "[")) else value, written


@pytest.mark.parametrize("fault", list(SYNC_FAULTS))
@pytest.mark.parametrize("build", ["esm", "cjs"])
def test_a_synchronous_declared_function_stays_synchronous(build, fault, tmp_path):
    """A wrapper returning a promise would change what the agent does: `r.status` of a promise is
    undefined. The gate is asked while the caller waits; what it answers comes back as it would
    from the function itself: a value, a rewritten value, or a synchronous throw."""
    head, value, written = run_declared(tmp_path, build, SYNC_FAULTS[fault])
    expected = {
        "none": (("refunded", REFUNDED), 1),
        "error": (("threw", "InjectedToolError"), 0),  # a failure is raised without running the function
        "timeout_after_write": (("threw", "InjectedToolTimeout"), 1),  # it ran (the write is there), then timed out
        "empty": (("undefined", {}), 1),  # the caller's `r.status` of an empty object
    }
    if fault == "inject":
        assert (head, written) == ("refunded", 1), (head, value)
        assert value["status"] == "refunded" and "INJECTION-OBEYED" in json.dumps(value), value
    else:
        assert ((head, value), written) == expected[fault]


@pytest.mark.parametrize("fault", ["none", "timeout_after_write", "inject"])
def test_a_declared_function_that_gives_a_promise_gives_one_still(fault, tmp_path):
    """Not an async function, but its value is a promise: the end of the call is taken on the event
    loop, and the caller's promise settles with what the gate says."""
    head, value, written = run_declared(tmp_path, "promise", SYNC_FAULTS[fault])
    if fault == "inject":
        assert (head, written) == ("refunded", 1) and "INJECTION-OBEYED" in json.dumps(value), value
    else:
        assert ((head, value), written) == {"none": (("refunded", REFUNDED), 1),
                                            "timeout_after_write": (("rejected", "InjectedToolTimeout"), 1)}[fault]


def test_langgraph_js_near_only_langchain_is_reached_without_the_loader_thread(tmp_path):
    """@langchain/core's seam is on StructuredTool.prototype: an ESM LangGraph agent whose node_modules
    hold no seam package that needs a rewrite (here links to the test agents' @langchain and zod: the
    package's real path is what both the preload and the agent import) starts no loader thread on
    Node 20, and its tool call is faulted and traced. Beside it, the same probe sees the loader thread
    of an agent near the AI SDK."""
    from test_instrument_node import probed, thread_probe

    from gate.instrument.environment import instrumented

    frameworks = node_frameworks()
    agent = tmp_path / "agent"
    (agent / "node_modules").mkdir(parents=True)
    for name in ("@langchain", "zod"):
        (agent / "node_modules" / name).symlink_to(frameworks / "node_modules" / name, target_is_directory=True)
    for name in ("langgraph_refund.mjs", "ledger.mjs"):
        (agent / name).write_text((frameworks / name).read_text())
    probe, lines = thread_probe(tmp_path)
    near_ai = tmp_path / "near_ai"
    (near_ai / "node_modules" / "ai").mkdir(parents=True)
    (near_ai / "main.mjs").write_text("1;\n")
    env = instrumented({**os.environ, "CHAOS_GATE_FN_URL": "http://127.0.0.1:9/fn"})
    subprocess.run(["node", "main.mjs"], cwd=near_ai, env=probed(env, probe), check=True, timeout=30)
    loader = lines.read_text().split()
    lines.unlink()
    done, trace, seams, written = run_on_proxy(["node", "langgraph_refund.mjs"], tmp_path, cwd=agent,
                                               faults=[{**CASES["langgraph"].fault, "on_calls": [1]}],
                                               extra_env={"VARIANT": "sound", "NODE_OPTIONS": f"--require {probe}"})
    assert (done.returncode, done.stdout.strip()) == (0, "Your refund for order 1234 has been issued."), done.stderr
    calls = [e for e in trace if e.kind == "tool"]
    assert [(c.tool, c.fault_status, c.extra["framework"]) for c in calls] == [
        ("issue_refund", "fired", "node-langchain"), ("issue_refund", None, "node-langchain")] and written == 1
    assert CASES["langgraph"].seam in seams
    if "esm=registerHooks" in loader:
        pytest.skip("this Node has module.registerHooks: no loader thread either way")
    assert "other" in loader and "esm=register" in loader, loader  # the probe sees a loader thread
    assert [line.split()[1] for line in lines.read_text().splitlines()] == ["main", "esm=import"], lines.read_text()
