"""Config loading: located errors with suggestions, env expansion, secrets, JSON Schema."""

import json
import subprocess
import sys

import jsonschema
import pytest
import yaml

from conftest import EXAMPLE, write_config
from gate.config import Config
from gate.plan import load_config
from gate.errors import ConfigError

BASE = """
version: 1
agent:
  url: http://127.0.0.1:9
  invoke:
    http: {url: "{{url}}/chat"}
inputs:
  - {id: a, text: hello}
"""


def test_misspelt_key_names_file_line_path_and_suggestion(tmp_path):
    path = write_config(tmp_path, BASE + "contract:\n  invariants:\n    - {id: x, type: contains, valeu: hi}\n")
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    msg = str(exc.value)
    assert f"{path}:10: contract.invariants[0].valeu: unknown key 'valeu' (did you mean 'value'?)" in msg


def test_misspelt_nested_agent_key_and_invariant_type(tmp_path):
    body = BASE.replace("  url: http", "  urll: http") + "contract:\n  invariants:\n    - {id: x, type: regx, pattern: a}\n"
    with pytest.raises(ConfigError) as exc:
        load_config(write_config(tmp_path, body))
    msg = str(exc.value)
    assert ":3: agent.urll: unknown key 'urll' (did you mean 'url'?)" in msg
    assert "unknown invariant type 'regx' (did you mean 'regex'?)" in msg


def test_cli_exit_code_2_for_misspelt_key(tmp_path, capsys):
    from gate.cli import main

    path = write_config(tmp_path, BASE.replace("inputs:", "inptus:"))
    assert main(["run", "-c", str(path)]) == 2
    err = capsys.readouterr().err
    assert ":6: inptus: unknown key 'inptus' (did you mean 'inputs'?)" in err


def test_bad_yaml_and_bad_regex_are_located(tmp_path):
    with pytest.raises(ConfigError, match=r":3: not valid YAML: .*starts on line 2"):
        load_config(write_config(tmp_path, "agent:\n  - [unclosed\n"))
    body = BASE + "contract:\n  invariants:\n    - {id: x, type: regex, pattern: '(unclosed'}\n"
    with pytest.raises(ConfigError, match=r":10: contract.invariants\[0\].pattern: not a valid regular expression"):
        load_config(write_config(tmp_path, body, "b.yaml"))


def test_env_expansion_default_and_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_HOST", "127.0.0.2")
    body = BASE.replace("http://127.0.0.1:9", "http://${AGENT_HOST}:${AGENT_PORT:-9}")
    loaded = load_config(write_config(tmp_path, body))
    assert loaded.config.agent.url == "http://127.0.0.2:9"
    monkeypatch.delenv("AGENT_HOST")
    with pytest.raises(ConfigError, match=r":3: agent.url: environment variable AGENT_HOST is not set"):
        load_config(write_config(tmp_path, body))


def test_secret_values_are_redacted(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_API_KEY", "sk-supersecret-value-123")
    monkeypatch.setenv("PLAIN", "hunter22")
    body = BASE.replace("http: {url: \"{{url}}/chat\"}",
                        "http: {url: \"{{url}}/chat\", headers: {authorization: \"Bearer ${MY_API_KEY}\", x: \"${PLAIN}\"}}")
    loaded = load_config(write_config(tmp_path, body + "secrets: [PLAIN]\n"))
    text = "error calling with Bearer sk-supersecret-value-123 and hunter22"
    assert loaded.redactor.redact(text) == "error calling with Bearer ***MY_API_KEY*** and ***PLAIN***"


def test_duplicate_ids_and_exclusive_invoke(tmp_path):
    body = BASE + "  - {id: a, text: again}\n"
    with pytest.raises(ConfigError, match=r":8: inputs\[1\]\.id: duplicate input id 'a'"):
        load_config(write_config(tmp_path, body))
    body = BASE.replace('http: {url: "{{url}}/chat"}', 'http: {url: x}\n    command: {command: cat}')
    with pytest.raises(ConfigError, match="set exactly one of 'http' or 'command'"):
        load_config(write_config(tmp_path, body, "c.yaml"))


def test_schema_command_prints_a_schema_the_example_satisfies():
    out = subprocess.run([sys.executable, "-m", "gate", "schema"], capture_output=True, text=True, check=True)
    schema = json.loads(out.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    example = yaml.safe_load((EXAMPLE / "chaos-gate.yaml").read_text())
    jsonschema.validate(example, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**example, "inptus": []}, schema)
    assert set(Config.model_fields) <= set(schema["properties"]) | {"json_"}


def test_validate_command(capsys):
    from gate.cli import main

    assert main(["validate", "-c", str(EXAMPLE / "chaos-gate.yaml")]) == 0
    assert "valid (39 cells" in capsys.readouterr().out
