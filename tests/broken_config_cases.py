"""The broken-config corpus: small YAML texts, each one mistake away from a valid config.

Kept apart from the tests that run them (tests/test_config_corpus.py) so the corpus
reads as a list: each Case is the text, the key path the message must name, what it
must say, and the suggestion where a near name exists. The line is the one marked
`#<` in the text (or given, when the text is bytes or cannot carry a comment).
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

AGENT_URL = """\
agent:
  url: http://127.0.0.1:9
  invoke:
    http: {url: "{{url}}/chat", output: $.reply}
"""

STARTED = """\
agent:
  start:
    command: [python, agent.py]
  invoke:
    http: {url: "{{url}}/chat"}
"""

UPSTREAMS = """\
llm: [{name: openai, upstream: sim}]
tools: [{name: orders, env: ORDERS_URL, upstream: "http://127.0.0.1:9"}]
inputs:
  - {id: refund, text: please refund order 1234}
  - {id: track, text: where is order 1234}
mutation: {count: 2}
"""

WORLD = """\
worlds:
  - name: shop
    env: SHOP_URL
    mcp_env: SHOP_MCP
    types:
      order: {fields: {status: str}}
    operations:
      get_order: {op: get, type: order}
"""


def cfg(extra: str = "", agent: str = AGENT_URL) -> str:
    return "version: 1\n" + agent + UPSTREAMS + extra


def invariant(text: str) -> str:
    return "contract:\n  invariants:\n    - " + text + "\n"


def scenario(faults: str, section: str = "chaos") -> str:
    return f"{section}:\n  scenarios:\n    - name: outage\n      faults:\n        - {faults}\n"


@dataclass
class Case:
    id: str
    text: str | bytes
    key: str  # the key path printed after file:line
    says: str  # a fragment of the message
    suggests: str | None = None  # the `did you mean` name, where one exists
    line: int | None = None  # when the text cannot carry a `#<` marker


def marked_line(text: str) -> int:
    [line] = [n for n, row in enumerate(text.splitlines(), 1) if row.rstrip().endswith("#<")]
    return line


def _deep_block(levels: int) -> str:
    return "".join("  " * i + f"k{i}:\n" for i in range(levels)) + "  " * levels + "v: 1\n"


def billion_laughs() -> str:
    rows = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        rows.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "\n".join(rows) + "\n"


ENCODING_AND_YAML = [
    Case("utf16-bom", codecs.BOM_UTF16_LE + cfg().encode("utf-16-le"), "", "UTF-16", line=1),
    Case("utf32-bom", codecs.BOM_UTF32_LE + cfg().encode("utf-32-le"), "", "UTF-32", line=1),
    Case("latin1-byte", cfg().replace("where is", "o\u00f9 est").encode("latin-1"), "", "not UTF-8", line=10),
    Case("binary-nul", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "", "NUL byte", line=3),
    Case("over-size-limit", cfg() + "# padding\n" * 500_000, "", "larger than 4 MiB", line=1),
    Case("control-character", cfg().replace("where is", "where\x07is"), "", "unacceptable character", line=10),
    Case("custom-tag", cfg("seed: !custom 3  #<\n"), "", "YAML tag '!custom' is not allowed"),
    Case("python-tag", cfg("seed: !!python/object/apply:os.system [echo hi]  #<\n"), "",
         "python/object/apply:os.system' is not allowed"),
    Case("binary-tag", cfg("seed: !!binary aGVsbG8=  #<\n"), "", "tag:yaml.org,2002:binary' is not allowed"),
    Case("flow-nesting-too-deep", cfg("sim: {rules: " + "[" * 200 + "]" * 200 + "}  #<\n"), "",
         "nested more than 64 levels"),
    Case("block-nesting-too-deep", cfg("profiles_dir:\n" + _deep_block(80)), "", "nested more than 64 levels",
         line=11 + 65),
    Case("billion-laughs", cfg("x_aliases:\n" + billion_laughs()), "", "expands to more than", line=18),
    Case("recursive-alias", cfg("sim: &loop {rules: [*loop]}  #<\n"), "", "recursive alias"),
    Case("integer-too-large", cfg("seed: 99999999999999999999  #<\n"), "seed", "is too large"),
    Case("integer-thousands-of-digits", cfg("seed: " + "9" * 5000 + "  #<\n"), "seed", "is too large"),
    Case("duplicate-top-level-key", cfg("mutation: {count: 3}  #<\n"), "mutation",
         "duplicate key 'mutation' (first on line 11, again on line 12)"),
    Case("duplicate-nested-key", cfg().replace('output: $.reply}', 'output: $.reply,\n      url: "{{url}}/x"}  #<'),
         "agent.invoke.http.url", "duplicate key 'url' (first on line 5, again on line 6)"),
    Case("duplicate-key-in-list-item", cfg().replace("text: where is order 1234}",
                                                     "text: where, text: again}  #<"),
         "inputs[1].text", "duplicate key 'text'"),
    Case("malformed-env-unclosed", cfg().replace('url: http://127.0.0.1:9', 'url: "http://${HOST"  #<'),
         "agent.url", "malformed environment reference '${HOST'"),
    Case("malformed-env-digit-first", cfg().replace('url: http://127.0.0.1:9', 'url: "http://${1X}"  #<'),
         "agent.url", "malformed environment reference '${1X}'"),
    Case("unset-env", cfg().replace('url: http://127.0.0.1:9', 'url: "http://${CHAOS_GATE_UNSET_VAR}"  #<'),
         "agent.url", "environment variable CHAOS_GATE_UNSET_VAR is not set"),
    Case("invalid-yaml", cfg("sim:\n  rules: [unclosed\n"), "", "not valid YAML", line=14),
    Case("root-is-a-list", "- agent\n- inputs\n", "", "must be a mapping", line=1),
    Case("empty-file", "", "", "must be a mapping", line=1),
    Case("complex-key", cfg("? [a, b]  #<\n: 1\n"), "(top level)", "a key must be a plain name"),
    Case("two-documents", cfg("---\nseed: 1\n"), "", "a second YAML document starts here", line=12),
]

REFERENCES = [
    Case("when-input-unknown", cfg(invariant("{id: x, type: not_empty, when: {input: refnd}}  #<")),
         "contract.invariants[0].when.input", "vacuous: when.input 'refnd' matches no cell", "refund"),
    Case("when-input-list-element", cfg("contract:\n  invariants:\n    - id: x\n      type: not_empty\n"
                                        "      when:\n        input:\n          - refund\n          - trak  #<\n"),
         "contract.invariants[0].when.input[1]", "vacuous", "track"),
    Case("when-scenario-unknown", cfg(invariant("{id: x, type: not_empty, when: {scenario: baselin}}  #<")),
         "contract.invariants[0].when.scenario", "matches no cell", "baseline"),
    Case("when-scenario-glob-unmatched", cfg(invariant("{id: x, type: not_empty, when: {scenario: 'cust*'}}  #<")),
         "contract.invariants[0].when.scenario", "vacuous: when.scenario 'cust*' matches no cell"),
    Case("when-mutation-unknown", cfg(invariant("{id: x, type: not_empty, when: {mutation: tpyo_x}}  #<")),
         "contract.invariants[0].when.mutation", "vacuous: when.mutation 'tpyo_x' matches no cell"),
    Case("when-stage-unknown", cfg(invariant("{id: x, type: not_empty, when: {stage: mutaton}}  #<")),
         "contract.invariants[0].when.stage", "unknown stage 'mutaton'", "mutation"),
    Case("when-stage-without-cells", cfg(invariant("{id: x, type: not_empty, when: {stage: replay}}  #<")),
         "contract.invariants[0].when.stage", "vacuous: the plan has no replay cells"),
    Case("when-combination-matches-nothing",
         cfg("contract:\n  invariants:\n    - id: x\n      type: not_empty\n"
             "      when: {stage: contract, scenario: mutation}  #<\n"),
         "contract.invariants[0].when", "vacuous: no cell of the plan matches every condition"),
    Case("when-in-replay-contract", cfg("replay:\n  contracts:\n    strict:\n"
                                        "      - {id: y, type: not_empty, when: {input: nope}}  #<\n"),
         "replay.contracts.strict[0].when.input", "vacuous"),
    Case("fault-target-unknown", cfg("chaos:\n  faults:\n    - {kind: error, target: ordrs}  #<\n"),
         "chaos.faults[0].target", "vacuous: fault target 'ordrs' names no upstream", "orders"),
    Case("fault-target-unknown-in-contract-scenario", cfg(scenario("{kind: server_error, target: opnai}  #<",
                                                                   "contract")),
         "contract.scenarios[0].faults[0].target", "names no upstream", "openai"),
    Case("llm-fault-on-tool-upstream", cfg(scenario("{kind: stall, target: orders}  #<")),
         "chaos.scenarios[0].faults[0].target", "fault 'stall' acts on LLM upstreams"),
    Case("tool-fault-on-llm", cfg(scenario("{kind: timeout_after_write, target: llm}  #<")),
         "chaos.scenarios[0].faults[0].target", "acts on tool upstreams"),
    Case("trace-target-unknown", cfg(invariant("{id: x, type: tool_calls_max, max: 1, target: ordrs}  #<")),
         "contract.invariants[0].target", "vacuous: target 'ordrs' matches no upstream", "orders"),
    Case("trace-tool-unknown", cfg(invariant("{id: x, type: tool_not_called, tool: refund_ordr}  #<")),
         "contract.invariants[0].tool", "vacuous: tool 'refund_ordr' matches no tool"),
    Case("world-state-unknown-world", cfg(WORLD + invariant("{id: x, type: world_state, world: shp, record: order}  #<")),
         "contract.invariants[0].world", "no world named 'shp'", "shop"),
    Case("world-state-unknown-record", cfg(WORLD + invariant("{id: x, type: world_state, world: shop, record: ordr}  #<")),
         "contract.invariants[0].record", "world 'shop' has no record type 'ordr'", "order"),
    Case("replay-session-missing", cfg("replay:\n  sessions:\n    - sessions/none.json  #<\n"),
         "replay.sessions[0]", "matches no session file"),
    Case("unknown-profile", cfg("chaos:\n  profiles:\n    - flaky_lm  #<\n"),
         "chaos.profiles[0]", "unknown profile 'flaky_lm'", "flaky_llm"),
]

TEMPLATES_PATTERNS_PATHS = [
    Case("template-unknown-in-body", cfg(agent=AGENT_URL.replace('output: $.reply}',
                                                                 'body: {q: "{{inptu}}"}}  #<')),
         "agent.invoke.http.body.q", "unknown template '{{inptu}}'", "{{input}}"),
    Case("template-unknown-in-url", cfg(agent=AGENT_URL.replace('"{{url}}/chat", output: $.reply}',
                                                                '"{{ulr}}/chat"}  #<')),
         "agent.invoke.http.url", "unknown template '{{ulr}}'", "{{url}}"),
    Case("template-unknown-in-header", cfg(agent=AGENT_URL.replace('output: $.reply}',
                                                                   'headers: {x-cell: "{{cell}}"}}  #<')),
         "agent.invoke.http.headers.x-cell", "unknown template '{{cell}}'", "{{cell_id}}"),
    Case("template-input-in-reset", cfg(agent=AGENT_URL + '  reset: {url: "{{url}}/reset/{{input}}"}  #<\n'),
         "agent.reset.url", "unknown template '{{input}}'"),
    Case("template-unknown-in-start-env", cfg(agent=STARTED.replace("command: [python, agent.py]",
                                                                    'command: [python, agent.py]\n'
                                                                    '    env: {P: "{{porrt}}"}  #<')),
         "agent.start.env.P", "unknown template '{{porrt}}'", "{{port}}"),
    Case("template-unknown-in-ready-url", cfg(agent=STARTED.replace("command: [python, agent.py]",
                                                                    'command: [python, agent.py]\n'
                                                                    '    ready: {url: "{{url}}/{{health}}"}  #<')),
         "agent.start.ready.url", "unknown template '{{health}}'"),
    Case("sim-answer-group-out-of-range", cfg("sim:\n  rules:\n    - {when: 'order (\\d+)', answer: 'ok {{2}}'}  #<\n"),
         "sim.rules[0].answer", "unknown template '{{2}}'"),
    Case("sim-arguments-template-misspelt", cfg("sim:\n  rules:\n    - when: 'order (\\d+)'\n      tool: orders\n"
                                                "      arguments: {id: '{{tool_reslt}}'}  #<\n"),
         "sim.rules[0].arguments.id", "unknown template '{{tool_reslt}}'"),
    Case("sim-answer-template-misspelt", cfg("sim:\n  rules:\n    - {when: refund, answer: 'done: {{tool_reslt}}'}  #<\n"),
         "sim.rules[0].answer", "unknown template", "{{tool_result}}"),
    Case("output-path-without-dollar", cfg(agent=AGENT_URL.replace("output: $.reply}", "output: reply}  #<")),
         "agent.invoke.http.output", "JSON path must start with '$'"),
    Case("output-path-unparsable", cfg(agent=AGENT_URL.replace("output: $.reply}", "output: '$.a['}  #<")),
         "agent.invoke.http.output", "cannot parse JSON path"),
    Case("state-json-path-unparsable", cfg(invariant("{id: x, type: state, url: 'http://h/s', json_path: '$..a'}  #<")),
         "contract.invariants[0].json_path", "cannot parse JSON path"),
    Case("sim-rule-regex", cfg("sim:\n  rules:\n    - {when: '(unclosed', answer: hi}  #<\n"),
         "sim.rules[0].when", "not a valid regular expression"),
    Case("ready-log-regex", cfg(agent=STARTED.replace("command: [python, agent.py]",
                                                      "command: [python, agent.py]\n    ready: {log: '[a-'}  #<")),
         "agent.start.ready.log", "not a valid regular expression"),
    Case("invariant-regex", cfg(invariant("{id: x, type: regex, pattern: '*a'}  #<")),
         "contract.invariants[0].pattern", "not a valid regular expression"),
    Case("fault-path-regex", cfg(scenario("{kind: error, target: orders, path: '(x'}  #<")),
         "chaos.scenarios[0].faults[0].path", "not a valid regular expression"),
    Case("on-calls-zero", cfg(scenario("{kind: error, target: orders, on_calls: [0]}  #<")),
         "chaos.scenarios[0].faults[0].on_calls[0]", "call number 0 never happens"),
    Case("on-calls-negative-second", cfg("chaos:\n  faults:\n    - kind: error\n      on_calls:\n        - 2\n"
                                         "        - -1  #<\n"),
         "chaos.faults[0].on_calls[1]", "call number -1 never happens"),
    Case("fixed-invoke-url-with-start", cfg(agent=STARTED.replace('"{{url}}/chat"}',
                                                                  '"http://127.0.0.1:8080/chat"}  #<')),
         "agent.invoke.http.url", "does not use {{url}} or {{port}}"),
]

NAMES_AND_WEIGHTS = [
    Case("duplicate-input-id", cfg().replace("{id: track,", "{id: refund,") .replace(
        "text: where is order 1234}", "text: where is order 1234}  #<"), "inputs[1].id", "duplicate input id 'refund'"),
    Case("duplicate-invariant-id", cfg("contract:\n  invariants:\n    - {id: x, type: not_empty}\n"
                                       "    - {id: x, type: json_valid}  #<\n"),
         "contract.invariants[1].id", "duplicate invariant id 'x' (already used by contract.invariants[0])"),
    Case("duplicate-upstream-name", cfg().replace("tools: [{name: orders,", "tools: [{name: openai,") .replace(
        'upstream: "http://127.0.0.1:9"}]', 'upstream: "http://127.0.0.1:9"}]  #<'),
         "tools[0].name", "duplicate upstream name 'openai'"),
    Case("world-mcp-name-clash", cfg(WORLD).replace("tools: [{name: orders,", "tools: [{name: shop-mcp,")
         .replace("  - name: shop\n", "  - name: shop  #<\n"), "worlds[0].name", "duplicate upstream name 'shop-mcp'"),
    Case("duplicate-contract-scenario", cfg("contract:\n  scenarios:\n    - {name: outage, faults: [{kind: reset}]}\n"
                                            "    - {name: outage, faults: [{kind: empty}]}  #<\n"),
         "contract.scenarios[1].name", "duplicate contract scenario name 'outage'"),
    Case("chaos-scenario-clashes-with-profile", cfg("chaos:\n  profiles: [flaky_llm]\n  scenarios:\n"
                                                    "    - {name: flaky_llm, faults: [{kind: reset}]}  #<\n"),
         "chaos.scenarios[0].name", "duplicate chaos scenario name"),
    Case("contract-scenario-named-baseline", cfg("contract:\n  scenarios:\n"
                                                 "    - {name: baseline, faults: [{kind: reset}]}  #<\n"),
         "contract.scenarios[0].name", "scenario name 'baseline' is reserved"),
    Case("chaos-scenario-named-mutation", cfg("chaos:\n  scenarios:\n"
                                              "    - {name: mutation, faults: [{kind: reset}]}  #<\n"),
         "chaos.scenarios[0].name", "scenario name 'mutation' is reserved"),
    Case("stage-weights-all-zero", cfg("scoring:\n  weights: {mutation: 0, chaos: 0, contract: 0, replay: 0}  #<\n"),
         "scoring.weights", "every stage weight is 0"),
    Case("mutation-weight-negative", cfg("mutation:\n  kinds: {typo: -1}  #<\n").replace("mutation: {count: 2}\n", ""),
         "mutation.kinds.typo", "weight -1 is negative"),
    Case("mutation-weights-all-zero", cfg("mutation:\n  kinds: {typo: 0, upper: 0}  #<\n").replace(
        "mutation: {count: 2}\n", ""), "mutation.kinds", "every mutation kind has weight 0"),
    Case("mutation-kind-unknown", cfg("mutation:\n  kinds:\n    tpyo: 1  #<\n").replace("mutation: {count: 2}\n", ""),
         "mutation.kinds.tpyo", "unknown mutation kind 'tpyo'", "typo"),
    Case("fault-parameter-misspelt", cfg(scenario("{kind: rate_limit, target: llm, probabilty: 0.5}  #<")),
         "chaos.scenarios[0].faults[0].probabilty", "unknown key 'probabilty'", "probability"),
    Case("fault-own-parameter-misspelt", cfg(scenario("{kind: rate_limit, target: llm, retry_afer: 1}  #<")),
         "chaos.scenarios[0].faults[0].retry_afer", "unknown key 'retry_afer'", "retry_after"),
    Case("fault-kind-unknown", cfg(scenario("{kind: ratelimit, target: llm}  #<")),
         "chaos.scenarios[0].faults[0].kind", "unknown fault kind 'ratelimit'", "rate_limit"),
    Case("invariant-type-unknown", cfg(invariant("{id: x, type: containz, value: a}  #<")),
         "contract.invariants[0].type", "unknown invariant type 'containz'", "contains"),
    Case("misspelt-top-level-key", cfg("chaoss: {}  #<\n"), "chaoss", "unknown key 'chaoss'", "chaos"),
]

CONFIG_CASES = ENCODING_AND_YAML + REFERENCES + TEMPLATES_PATTERNS_PATHS + NAMES_AND_WEIGHTS

# command lines: argv and the start of the one-line message, after 'chaos-gate: '
FLAG_CASES = [
    ("concurrency-negative", ["run", "--concurrency", "-1"], "--concurrency: must be at least 1"),
    ("concurrency-zero", ["run", "--concurrency", "0"], "--concurrency: must be at least 1"),
    ("concurrency-too-many", ["run", "--concurrency", "1000"], "--concurrency: must be at most 64"),
    ("runs-zero", ["run", "--runs", "0"], "--runs: must be at least 1"),
    ("runs-not-a-number", ["run", "--runs", "two"], "--runs: 'two' is not a whole number"),
    ("shard-empty", ["run", "--shard", ""], "--shard: '' is not I/N"),
    ("shard-index-above-total", ["run", "--shard", "3/2"], "--shard: '3/2' is not I/N"),
    ("shard-index-zero", ["run", "--shard", "0/2"], "--shard: '0/2' is not I/N"),
    ("seed-not-a-number", ["run", "--seed", "abc"], "--seed: 'abc' is not a whole number"),
    ("seed-fraction-on-plan", ["plan", "--seed", "1.5"], "--seed: '1.5' is not a whole number"),
    ("seed-too-large-on-reproduce", ["reproduce", "x", "--seed", str(2 ** 64)], "--seed: must be at most"),
    ("sweep-seeds-zero", ["sweep", "--seeds", "0"], "--seeds: must be at least 1"),
    ("unknown-flag", ["validate", "--colour"], "unrecognized arguments: --colour"),
]
